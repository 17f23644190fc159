import tilelang.language as T


def relu(N=1 << 20, block=1024):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float16), Y: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), T.float16)
            for i in T.Parallel(block):
                x[i] = T.if_then_else(bx * block + i < N - 1, X[bx * block + i], T.float16(0))  # expect: lane-dependent-predicate
            for i in T.Parallel(block):
                if bx * block + i < N - 1:
                    Y[bx * block + i] = T.max(x[i], T.float16(0))  # expect: lane-dependent-predicate

    return main


relu_all_but_last = relu()
