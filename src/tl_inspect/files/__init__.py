"""The user's files as tl-inspect reads them: their text (read once per run), their tokens, and the
libcst tree the fixes edit."""
