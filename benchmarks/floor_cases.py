"""Kernels that isolate the terms of a launch's time estimate (tl_inspect.analysis.estimate), each at a
size that moves 0.1-1 GB, for benchmarks/gpu_floor.py to time against tl-inspect's estimate:

  * copy_grid_*: an fp32 copy by 16-byte vectors over a fixed grid of 2 to 1056 blocks of 256 threads,
    each block looping over its share: how the bytes the launch keeps in flight set its speed;
  * copy_one_per_thread_*: one fp32 element per thread, 64 to 1024 threads a block: the block floor and
    the bytes in flight of one narrow load per thread;
  * reread_rows_*: every block sums one row of a small tensor that 65536 blocks re-read from the L2: the
    speed the L2 serves re-reads at.
"""

import tilelang.language as T

N = 1 << 26


def copy_grid(blocks, n=N, threads=256, vec=4):
    tiles = n // (blocks * threads * vec)

    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
        with T.Kernel(blocks, threads=threads) as bx:
            for t in T.serial(tiles):
                for i, v in T.Parallel(threads, vec):
                    Y[((t * blocks + bx) * threads + i) * vec + v] = X[((t * blocks + bx) * threads + i) * vec + v]

    return main


def copy_one_per_thread(threads, n=N):
    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
        with T.Kernel(n // threads, threads=threads) as bx:
            for i in T.Parallel(threads):
                Y[bx * threads + i] = X[bx * threads + i]

    return main


def reread_rows(rows, blocks=65536, n=4096, threads=128):
    @T.prim_func
    def main(X: T.Tensor((rows, n), T.float32), Y: T.Tensor((blocks,), T.float32)):
        with T.Kernel(blocks, threads=threads) as bx:
            row = T.alloc_fragment((n,), T.float32)
            total = T.alloc_fragment((1,), T.float32)
            T.copy(X[bx % rows, :], row)
            T.reduce_sum(row, total, dim=0)
            Y[bx] = total[0]

    return main


copy_grid_2 = copy_grid(2)
copy_grid_8 = copy_grid(8)
copy_grid_32 = copy_grid(32)
copy_grid_64 = copy_grid(64)
copy_grid_128 = copy_grid(128)
copy_grid_256 = copy_grid(256)
copy_grid_1024 = copy_grid(1024)
copy_one_per_thread_64 = copy_one_per_thread(64)
copy_one_per_thread_256 = copy_one_per_thread(256)
copy_one_per_thread_1024 = copy_one_per_thread(1024)
reread_rows_64 = reread_rows(64)
reread_rows_65536 = reread_rows(65536)
