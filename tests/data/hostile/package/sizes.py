"""Issue 20, class 5: imported by package/relative_import.py as `from .sizes import SIZE`."""
SIZE = 1024
