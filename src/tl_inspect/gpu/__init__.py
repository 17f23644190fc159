"""The target GPU: what an arch is (SMs, shared memory, bandwidth and peaks, the nvcc arch), the cost
tables the cost model prices with, and `tl-inspect calibrate`, which fits them on this machine's GPU."""
