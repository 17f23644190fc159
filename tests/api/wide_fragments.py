"""One 64 x 64 fp32 fragment scaled in place, launched with 128, 256 and 512 threads: the layout
pictures of the HTML report must stay readable at each (tests/e2e/test_reports.py, test_report_browser.py)."""

import tilelang.language as T


def scale_rows(threads, M=64, N=64):
    @T.prim_func
    def main(X: T.Tensor((1024, N), T.float32), Y: T.Tensor((1024, N), T.float32)):
        with T.Kernel(1024 // M, threads=threads) as bx:
            tile = T.alloc_fragment((M, N), T.float32)
            T.copy(X[bx * M, 0], tile)
            for i, j in T.Parallel(M, N):
                tile[i, j] = tile[i, j] * 2
            T.copy(tile, Y[bx * M, 0])

    return main


TL_INSPECT_CASES = {"scale_rows": [{"threads": 128}, {"threads": 256}, {"threads": 512}]}
