"""Words that rules, causes and renderers phrase alike: counts, articles, lists, byte distances, the
accesses of a statement, and an index as the user's line writes it. Plain string work."""

from __future__ import annotations

# words whose plural is not the word plus "s"
PLURALS = {"info": "info", "access": "accesses", "global access": "global accesses"}


def plural(count, word: str) -> str:
    """ "1 element", "3 elements", "2 info"."""
    return f"{count} {word if count == 1 else PLURALS.get(word, word + 's')}"


def article(number: int) -> str:
    """ "an" before numbers read with a leading vowel sound (8, 11, 18, 80...), else "a"."""
    return "an" if str(number).startswith("8") or number in (11, 18) else "a"


def join(names) -> str:
    """ "A", "A and B", "A, B and C"."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def byte_count(count: int | None) -> str:
    """An exact byte distance: "16 B", "32 KiB"; "?" when unknown."""
    if count is None:
        return "?"
    if count >= 1024 and count % 1024 == 0:
        return f"{count // 1024} KiB"
    return f"{count} B"


def byte_size(n: int | None) -> str:
    """A size: "6.0 MiB", "512 B"; "unknown (run-time grid)" when unknown."""
    if n is None:
        return "unknown (run-time grid)"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return ""


def written_in(text: str, buffer: str, fallback: str) -> str:
    """`buffer[...]` as the line `text` writes it (the compiler renames block indices), else `fallback`."""
    start = text.find(f"{buffer}[")
    if start < 0 or (start and (text[start - 1].isalnum() or text[start - 1] == "_")):
        return fallback
    depth = 0
    for end in range(start + len(buffer), len(text)):
        depth += {"[": 1, "]": -1}.get(text[end], 0)
        if depth == 0:
            return text[start : end + 1]
    return fallback


def accesses_text(accesses) -> str:
    """ "The C store and the A and B loads", naming each buffer once per direction."""
    parts = []
    for direction in ("store", "load"):
        names = list(dict.fromkeys(a.buffer for a in accesses if a.kind == direction))
        if names:
            parts.append(f"the {join(names)} {direction}{'s' * (len(names) > 1)}")
    text = " and ".join(parts)
    return text[0].upper() + text[1:]
