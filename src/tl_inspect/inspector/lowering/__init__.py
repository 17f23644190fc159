"""Compile one kernel for CUDA without a GPU and read what came out: the TIR, the CUDA's accesses,
its line map, layouts, and ptxas's resource usage."""
