"""The worker processes: a zygote that imports tilelang once, one forked worker per user file under
its limits, the result cache, and the errors users read."""
