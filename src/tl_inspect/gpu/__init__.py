"""The target GPU: what an arch is (SMs, shared memory, bandwidth and peaks, the nvcc arch), the cost
tables the cost model prices with, this machine's GPUs, and `tl-inspect calibrate`, which fits a table on
one of them."""
