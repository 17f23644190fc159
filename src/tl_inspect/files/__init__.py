"""The user's files as tl-inspect reads them: their text (read once per run), their tokens, and the
libcst tree the fixes edit; and the folder tl-inspect keeps its own files in between runs."""
