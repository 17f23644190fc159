"""A 10 000-term expression: lowering recurses deeply enough to overflow an 8 MB stack (facts F)."""
import tilelang
import tilelang.language as T


def sum_of_terms(A, terms):
    expr = A[0]
    for j in range(1, terms):
        expr = expr + A[j % 1024] * (j % 7)
    return expr


def deep(terms):
    @T.prim_func
    def deep_main(A: T.Tensor((1024,), T.float32), B: T.Tensor((1,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            B[0] = sum_of_terms(A, terms)

    return deep_main


deep_10k = deep(10000)
