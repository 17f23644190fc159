"""This machine's CUDA GPUs as the driver lists them, asked without initialising CUDA, and whether kernels
for an arch can run here."""

from __future__ import annotations

import shutil
import subprocess

from tl_inspect.gpu.arch import normalised


def gpus() -> list:
    """[(name, compute capability "9.0"), ...] of this machine's CUDA devices, as the driver lists them."""
    try:
        found = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,compute_cap", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        found = ""
    return [tuple(part.strip() for part in line.rsplit(",", 1)) for line in found.splitlines() if "," in line]


def gpu_names() -> list:
    return [name for name, _ in gpus()]


def missing_gpu(arch: str) -> str | None:
    """Why kernels for `arch` cannot run here (one line), or None: a CUDA device of that arch and nvcc."""
    found = gpus()
    if not found:
        return f"a CUDA GPU of arch {arch} is needed to run kernels, and none is here"
    if not any(normalised(cap) == normalised(arch) for _, cap in found):
        names = ", ".join(f"{name} (sm_{cap.replace('.', '')})" for name, cap in found)
        return f"a CUDA GPU of arch {arch} is needed to run kernels; this machine has {names} (try --arch)"
    if shutil.which("nvcc") is None:
        return f"nvcc is needed to build kernels for the {arch} GPU here, and it is not on PATH"
    return None
