"""Issue 20, class 4: a thread prints 64 MiB lines (up to 3 GiB) while the import waits for it; what the worker
writes into its folder must be stopped well before that."""
import sys
import threading

import tilelang


def shout():
    line = "x" * (64 << 20)
    for _ in range(48):
        print(line)


printer = threading.Thread(target=shout)
printer.start()
printer.join()
