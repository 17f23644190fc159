"""What tl-inspect knows about a compiled kernel, computed once and read by every rule.

* `kernel`: the kernel model, `KernelModel` (thread and block variables with their extents, `let`
  bindings, buffers, stores and tile operators, first accesses, units), each fact computed on first
  use from the plain-data TIR snapshots and read with the index algebra of `tl_inspect.tir.indexing`;
  every rule reads it as `ctx.facts`;
* `statements`: the stores and typed tile operators (`Copy`, `Reduce`, `Gemm`, `AtomicAdd`) it holds;
* `initialization`: the def-use walk, which buffers each statement reads, accumulates into or writes;
* `units`: the units the compiler vectorizes together (`T.Parallel` nests, `T.copy` regions,
  per-thread statements), with the bits each global access moves per block;
* `footprints`: what one unit's iterations touch, and how many lanes each of its accesses could have;
* `detection`: why one global access is narrower or less coalesced than its footprint allows, as
  structured `Cause` values of the kinds `tl_inspect.causes` declares, never prose;
* `cost`: what an access costs, from the cost table it is given (the H200's ships), and its weight in
  the kernel;
* `estimate`: the launch's time against its floor, and what each fix gains it;
* `verdicts`: one verdict per global access;
* `proofs`: `unproven` verdicts made `costly` where a kernel rebuilt without the cause shows the access
  improve (the inspector rebuilds it; the analysis only compares);
* `ledger`: the bytes and FLOPs a launch moves, against the peaks of its arch (`tl_inspect.gpu.arch`);
* `pipeline`: `analyse`, judge -> prove -> ledger, the one place that order is written, and the one
  that takes the run's cost table and hands it to every step that prices.
Messages are phrased by each cause's kind, from its fields; rules declare which kinds they report.
"""
