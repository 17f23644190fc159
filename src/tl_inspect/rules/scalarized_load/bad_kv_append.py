import tilelang.language as T


def kv_append(S=16384, tokens=8192, heads=8, D=128, block_t=16):
    @T.prim_func
    def main(K: T.Tensor((tokens, heads, D), T.bfloat16), Cache: T.Tensor((heads, D, S), T.bfloat16), pos: T.int32):
        with T.Kernel(T.ceildiv(tokens, block_t), heads, threads=128) as (bt, h):
            for t, d in T.Parallel(block_t, D):
                Cache[h, d, pos + bt * block_t + t] = K[bt * block_t + t, h, d]  # expect: scalarized-load

    return main


# the cache keeps tokens innermost: neighbouring threads store a whole row (32 KiB) apart
kv_append_transposed = kv_append()
