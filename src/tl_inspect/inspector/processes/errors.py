"""Error text as users read it: one line per failure, pointing at their own file, and printable."""

from __future__ import annotations

import os
import re
import traceback

# the limit this worker runs under, for the message of a MemoryError (one user file per process); the
# worker sets it when it limits its own memory
memory_limit_mib = 0

_LOCATION = re.compile(r"-->\s+(?P<file>.+?):(?P<line>\d+)(?::\d+)?\s*$", re.M)
_NOISE = re.compile(r"^\s*(Traceback|File \"|\d+: |\^|\||-->|$)")


def message_of(exc: BaseException) -> str:
    """`str(exc)`, whatever the user's exception class does in its `__str__`."""
    try:
        message = str(exc)
    except BaseException as error:  # noqa: BLE001 - a `__str__` may raise anything
        return f"(its message could not be shown: {type(error).__name__} in its __str__)"
    return message if isinstance(message, str) else ""


def describe_error(exc: BaseException, user_file: str, when: str) -> tuple[str, int | None]:
    """`Type: first line of the message (when)` and the line of the user's file it points at, if any."""
    message = message_of(exc)
    first = next((ln.strip() for ln in message.splitlines() if not _NOISE.match(ln)), "")
    first = re.sub(r"^(tvm\.error\.)?\w+Error:\s*", "", first)
    location = None
    for match in _LOCATION.finditer(message):
        if os.path.abspath(match.group("file")) == user_file:
            location = int(match.group("line"))
    if location is None:
        for frame in reversed(traceback.extract_tb(exc.__traceback__)):
            if os.path.abspath(frame.filename) == user_file:
                location = frame.lineno
                break
    if isinstance(exc, MemoryError):
        first = f"over the memory limit of {memory_limit_mib} MiB per worker (--max-memory)"
    text = printable(f"{type(exc).__name__}: {first or 'no message'} ({when})")
    if needed_cuda(exc):
        # tl-inspect's workers never initialise CUDA: the file itself asked for a device this machine lacks
        at = f"line {location}" if location else "the module"
        text = printable(
            f"{at} needed a CUDA device at import, and none can be used here "
            f"({type(exc).__name__}: {first or 'no message'})"
        )
    if len(text) > 300:
        text = text[:297] + "..."
    return text, location


_TORCH_CUDA = os.sep + os.path.join("torch", "cuda") + os.sep


def needed_cuda(exc: BaseException) -> bool:
    """The error came from torch initialising CUDA (`torch.randn(..., device="cuda")`, `.cuda()`)."""
    return any(_TORCH_CUDA in frame.filename for frame in traceback.extract_tb(exc.__traceback__))


# control characters but the tab, and the invisible ones that reorder or break what a terminal shows (bidi overrides
# and isolates, marks, line and paragraph separators)
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """The user's text (an error, a file or kernel name) with control and bidi characters written as
    `\\x1b` or `\\u202e`: escape sequences in it must not reach the terminal that shows it."""
    return _CONTROL.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


_LOG_START = re.compile(r"^\[\d\d:\d\d:\d\d\]\s*(?:\S+:\d+:\s*)?")


def split_diagnostics(text: str) -> tuple:
    """Split fd 2 output into messages: a message starts at a `[hh:mm:ss]` log prefix."""
    messages: list[list[str]] = []
    for line in text.splitlines():
        if _LOG_START.match(line) or not messages:
            messages.append([_LOG_START.sub("", line)])
        else:
            messages[-1].append(line)
    return tuple("\n".join(m).strip() for m in messages if "\n".join(m).strip())
