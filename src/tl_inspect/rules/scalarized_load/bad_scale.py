import tilelang.language as T


def scale(N=1 << 20, threads=128, per_thread=8):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(N // (threads * per_thread), threads=threads) as bx:
            tx = T.get_thread_binding()
            for v in T.serial(per_thread):
                C[(bx * threads + tx) * per_thread + v] = A[(bx * threads + tx) * per_thread + v] * T.float16(2)  # expect: scalarized-load

    return main


# each thread walks its 8 contiguous elements one at a time: neighbouring threads 16 B apart
scale_serial_per_thread = scale()
