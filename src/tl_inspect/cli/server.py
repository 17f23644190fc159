"""`tl-inspect server`: the language server over stdio (tl_inspect.server)."""

from __future__ import annotations

import argparse

from tl_inspect.cli.usage import EXIT_CLEAN


def server(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tl-inspect server",
        description="A language server over stdio for editors: diagnostics on open and save, hover with the "
        "verdict, cost and proof, code actions for the verified fixes. Configuration comes from the "
        "pyproject.toml nearest the folder the editor starts it in.",
    )
    parser.parse_args(argv)
    # pygls and lsprotocol take most of a second to import: only the server needs them
    from tl_inspect.server import serve

    serve()
    return EXIT_CLEAN
