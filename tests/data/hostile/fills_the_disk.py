"""Issue 20, class 4: at import, write into the temporary folder until the disk is full, and leave it full;
the file must be named with the cause, and the files inspected after it must not fail."""
import tempfile

import tilelang

with tempfile.NamedTemporaryFile(delete=False) as hog:
    try:
        while True:
            hog.write(b"x" * (1 << 20))
            hog.flush()
    except OSError:
        pass
