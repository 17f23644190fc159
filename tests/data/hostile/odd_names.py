"""Issue 20, class 8: a form feed and a U+2028 inside lines before the finding (line 16), and case labels
holding an escape sequence, bidi overrides, a newline, an arrow and 300 characters."""
import tilelang
import tilelang.language as T

TL_INSPECT_CASES = {"padded": [{"N": 2047, "tag": "\x1b[2J\u202e\n\u2192"}, {"N": 2047, "tag": "t" * 300}]}
FORM_FEED = 1    # still line 7
SEPARATOR = "  still line 8"


def padded(N, tag):
    @T.prim_func
    def padded_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(2, threads=128) as bx:
            for i in T.Parallel(1024):
                B[bx * 1024 + i] = A[bx * 1024 + i] + 1  # the finding

    return padded_main
