"""`--measure`: what the machine's GPU offers, and kernels timed on it."""
