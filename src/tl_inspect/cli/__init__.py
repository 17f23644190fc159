"""Command line: `tl-inspect PATH...`, `tl-inspect explain FILE[::KERNEL]`, `tl-inspect rule CODE-OR-SLUG`,
`tl-inspect rules` and the others: a module each beside this one, named by `tl_inspect.cli.dispatch`.

An inspection's critical path is the worker's import of tilelang (about 2 s), so `main` starts the worker
before it imports anything else: the rules, the configuration and the reporters load beside it.
"""

from __future__ import annotations

import os
import signal
import sys

# subcommands that inspect nothing in a worker started now (the server keeps its own, for its whole life)
_NO_WORKER = ("rules", "rule", "calibrate", "merge", "server", "clean")


class Terminated(BaseException):
    """SIGTERM, raised so that every cleanup runs: workers killed, temporary folders removed."""


def _terminate(signum, frame):
    raise Terminated


def _standard_streams() -> None:
    """Give a closed fd 0, 1 or 2 /dev/null, so that no pipe or file of the run takes its number (the report
    would go into it); and make both streams write what their encoding lacks (an ASCII terminal) as escapes."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            os.open(os.devnull, os.O_RDWR)  # the lowest free number: this one
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _standard_streams()
    previous = signal.signal(signal.SIGTERM, _terminate)
    # an inspection (of PATHs or by `explain`), not a listing nor a request for the help or the version
    early = bool(argv) and argv[0] not in _NO_WORKER and not {"-h", "--help", "--version"} & set(argv)
    try:
        if early:
            from tl_inspect.inspector.processes.zygote import start_early

            start_early()
        from tl_inspect.cli.dispatch import run_command

        return run_command(argv)
    except KeyboardInterrupt:
        print("tl-inspect: interrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("tl-inspect: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if early:
            from tl_inspect.inspector.processes.zygote import discard_early

            # not taken by an inspection: a usage error, every result cached, an interruption
            discard_early()
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
