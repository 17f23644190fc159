"""`--dump DIR`: the generated code of every kernel, for people who want to read it."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re

from tl_inspect.model import RunResult

# a folder name, well under the 255 bytes file systems allow (a long case label must not make --dump fail)
_MAX_NAME = 96


def _safe(name: str) -> str:
    safe = re.sub(r"[^\w.\-=,\[\]]", "_", name, flags=re.ASCII)
    if len(safe) <= _MAX_NAME:
        return safe
    return safe[: _MAX_NAME - 11] + "-" + hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def write_dump(run: RunResult, directory: str) -> list[str]:
    """Write DIR/<file stem>/<kernel>/{kernel.cu, kernel.line.cu, tir.<stage>.py, layouts.json,
    layouts.txt}; return the kernel directories."""
    written = []
    for report in run.reports:
        k = report.kernel
        if k.status != "ok":
            continue
        stem = os.path.splitext(os.path.basename(k.file))[0]
        base = folder = os.path.join(directory, _safe(stem), _safe(k.name))
        # two files of one name (a/norms.py, b/norms.py) with a kernel of one name: number the later ones
        number = 1
        while folder in written:
            number += 1
            folder = f"{base}-{number}"
        os.makedirs(folder, exist_ok=True)
        files = {
            "kernel.cu": k.source,
            "kernel.line.cu": k.source_with_directives,
            "layouts.txt": k.layout_text,
            "layouts.json": json.dumps([dataclasses.asdict(lay) for lay in k.layouts], indent=1),
        }
        for stage, snapshot in k.snapshots.items():
            files[f"tir.{stage}.py"] = "\n\n".join(func.script for func in snapshot.funcs)
        for name, text in files.items():
            with open(os.path.join(folder, name), "w", encoding="utf-8") as f:
                f.write(text)
        written.append(folder)
    return written
