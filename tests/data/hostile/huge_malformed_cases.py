"""Issue 20, class 7: a malformed TL_INSPECT_CASES entry 17 MB long; the error must quote it abbreviated."""
import tilelang

TL_INSPECT_CASES = {"scaled": "x" * 17_000_000}


def scaled(N):
    return N
