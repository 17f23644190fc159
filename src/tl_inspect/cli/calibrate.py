"""`tl-inspect calibrate`: fit the cost model's terms on this machine's GPU (tl_inspect.gpu.calibration)."""

from __future__ import annotations

import argparse

from tl_inspect.cli.usage import EXIT_CLEAN, UsageError
from tl_inspect.gpu.cost_table import TERMS
from tl_inspect.inspector.measurement.device import NoGpu


def calibrate(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="tl-inspect calibrate",
        description="Time the cost model's calibration suite on this machine's CUDA GPU (a few minutes), fit "
        "each term, print the fitted terms against the shipped H200 ones, and write the table that "
        "later runs on this GPU price their estimates with.",
    )
    parser.add_argument(
        "--term",
        action="append",
        default=[],
        choices=list(TERMS),
        metavar="TERM",
        help="only the cases of this term (repeatable; the others keep the shipped values)",
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="write the table to FILE (default: the cache's table of this GPU, cost/<GPU>.json)",
    )
    options = parser.parse_args(argv)
    # the calibration suite is written in tilelang: it imports tilelang and torch
    from tl_inspect.gpu.calibration import calibrate as fit_on_this_gpu

    try:
        fit_on_this_gpu(options.term, options.output)
    except NoGpu as exc:
        raise UsageError(str(exc)) from None
    return EXIT_CLEAN
