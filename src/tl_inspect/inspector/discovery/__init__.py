"""Find a user file's kernels and the calls that bind them: discovery in the imported module, and cases
inferred from the source without running it."""
