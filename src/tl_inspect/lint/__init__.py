"""The lint run: settings, rule selection, suppressions, baselines, changed lines, case sweeps, merging
shards, and the one driver that runs the rules over inspected files."""
