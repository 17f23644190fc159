"""What tl-inspect knows about a compiled kernel, computed once and read by every rule.

* `facts`: the kernel's shared facts (thread and block variables with their extents, `let` bindings,
  the units the compiler vectorizes together: `T.Parallel` nests, `T.copy` regions, per-thread
  statements), built from the plain-data TIR snapshots;
* `indexing`: the index algebra those facts are read with (affine forms, footprints over the thread
  block, alignment);
* `causes`: why one global access is narrower or less coalesced than its footprint allows, as
  structured `Cause` values of the kinds `tl_inspect.causes` declares, never prose;
* `cost`: what an access costs on an H200, from the measured table, and its weight in the kernel;
* `verdicts`: one verdict per global access.
Messages are phrased by each cause's kind, from its fields; rules declare which kinds they report.
"""
