"""What tl-inspect knows about a compiled kernel, computed once and read by every rule.

* `facts`: the kernel's shared facts (thread and block variables with their extents, `let` bindings,
  the units the compiler vectorizes together: `T.Parallel` nests, `T.copy` regions, per-thread
  statements), built from the plain-data TIR snapshots and read with the index algebra of
  `tl_inspect.indexing`;
* `causes`: why one global access is narrower or less coalesced than its footprint allows, as
  structured `Cause` values from a closed list, never prose;
* `cost`: what an access costs on an H200, from the measured table, and its weight in the kernel;
* `verdicts`: one verdict per global access, and which rule owns each cause;
* `proofs`: `unproven` verdicts made `costly` where a kernel rebuilt without the cause shows the access
  improve (the inspector rebuilds it; the analysis only compares);
* `pipeline`: `analyse`, judge -> prove -> ledger, the one place that order is written.
Messages are rendered by the rule that owns a cause, from the verdict's fields.
"""
