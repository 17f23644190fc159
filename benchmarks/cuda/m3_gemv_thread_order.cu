// Plain-CUDA check behind docs/gpu-impact.md ("Access orders checked in plain CUDA"): the access pattern
// tilelang 0.1.15 emits, timed on an H200 with nvcc -O3 -arch=sm_90 (min of 20 launches, CUDA events).
#include <cstdio>
#include <cuda_fp16.h>
template<bool SW> __global__ void gv(const half*A,const half*B,half*C,int K){int tn=SW?threadIdx.y:threadIdx.x,tk=SW?threadIdx.x:threadIdx.y;
 __shared__ float cs[32];if(tk==0)cs[tn]=0;__syncthreads();float acc=0;size_t row=(size_t)(blockIdx.x*32+tn)*K;
 for(int bk=0;bk<K/32;bk++)acc+=__half2float(A[bk*32+tk])*__half2float(B[row+bk*32+tk]);
 atomicAdd(&cs[tn],acc);__syncthreads();if(tk==0)C[blockIdx.x*32+tn]=__float2half(cs[tn]);}
template<class F> float tm(F f){cudaEvent_t a,b;cudaEventCreate(&a);cudaEventCreate(&b);for(int i=0;i<3;i++)f();float best=1e9;
 for(int i=0;i<20;i++){cudaEventRecord(a);f();cudaEventRecord(b);cudaEventSynchronize(b);float t;cudaEventElapsedTime(&t,a,b);if(t<best)best=t;}return best;}
int main(){const int N=16384,K=16384;half*A,*B,*C;cudaMalloc(&A,K*2);cudaMalloc(&B,(size_t)N*K*2);cudaMalloc(&C,N*2);cudaMemset(B,0x3c,(size_t)N*K*2);cudaMemset(A,0x3c,K*2);
 double by=(double)N*K*2;
 float t1=tm([&]{gv<false><<<N/32,dim3(32,32)>>>(A,B,C,K);});
 float t2=tm([&]{gv<true><<<N/32,dim3(32,32)>>>(A,B,C,K);});
 printf("x=row (upstream naive_splitk_gemv) %.3f ms %.0f GB/s\nx=k (swapped)                     %.3f ms %.0f GB/s\nerr %s\n",t1,by/t1/1e6,t2,by/t2/1e6,cudaGetErrorString(cudaGetLastError()));}
