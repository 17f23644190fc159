// Plain-CUDA check behind docs/gpu-impact.md ("Access orders checked in plain CUDA"): the access pattern
// tilelang 0.1.15 emits, timed on an H200 with nvcc -O3 -arch=sm_90 (min of 20 launches, CUDA events).
#include <cstdio>
#include <cstdint>
#include <cuda_bf16.h>
template<int D,class LT,class ST> __global__ void gen(const LT*x,ST*q){constexpr int LE=sizeof(LT)/2,SE=sizeof(ST);int r=blockIdx.x*32+threadIdx.x%32,g=blockIdx.y;
 const LT*p=x+((size_t)r*2+g)*(D/LE);LT v[D/LE];float m=0;
#pragma unroll
 for(int k=0;k<D/LE;k++){v[k]=p[k];const __nv_bfloat16*h=(const __nv_bfloat16*)&v[k];for(int e=0;e<LE;e++)m=fmaxf(m,fabsf(__bfloat162float(h[e])));}
 ST*o=q+((size_t)r*2+g)*(D/SE);const __nv_bfloat16*h=(const __nv_bfloat16*)v;
#pragma unroll
 for(int k=0;k<D/SE;k++){ST w;unsigned char*c=(unsigned char*)&w;for(int e=0;e<SE;e++)c[e]=(unsigned char)(int)(__bfloat162float(h[k*SE+e])*127.f/m);o[k]=w;}}
template<class F> float tm(F f){cudaEvent_t a,b;cudaEventCreate(&a);cudaEventCreate(&b);for(int i=0;i<5;i++)f();float best=1e9;
 for(int i=0;i<30;i++){cudaEventRecord(a);f();cudaEventRecord(b);cudaEventSynchronize(b);float t;cudaEventElapsedTime(&t,a,b);if(t<best)best=t;}return best;}
int main(){const int S=1<<20;void*x;void*q;cudaMalloc(&x,(size_t)S*2*112*2);cudaMalloc(&q,(size_t)S*2*112);cudaMemset(x,0x3c,(size_t)S*2*112*2);
 double b=(double)S*2*112*3;dim3 G(S/32,2);
 float t1=tm([&]{gen<112,uint2,uint32_t><<<G,128>>>((uint2*)x,(uint32_t*)q);});
 float t2=tm([&]{gen<112,uint4,uint32_t><<<G,128>>>((uint4*)x,(uint32_t*)q);});
 float t3=tm([&]{gen<112,uint2,uint2><<<G,128>>>((uint2*)x,(uint2*)q);});
 float t4=tm([&]{gen<112,uint4,uint2><<<G,128>>>((uint4*)x,(uint2*)q);});
 printf("ld64 st32 %.0f\nld128 st32 %.0f\nld64 st64 %.0f\nld128 st64 %.0f GB/s\nerr %s\n",b/t1/1e6,b/t2/1e6,b/t3/1e6,b/t4/1e6,cudaGetErrorString(cudaGetLastError()));}
