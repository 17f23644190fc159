"""The lint run: settings, rule selection, suppressions, baselines, changed lines, case sweeps, merging
shards, the rules over inspected files (`checking`), and the one driver of a run (`driver`)."""
