"""`--nvcc`: compile the generated CUDA with nvcc and read ptxas's resource usage."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile

from tl_inspect.gpu.arch import nvcc_target

NVCC_TIMEOUT_SECONDS = 300
_USAGE = re.compile(r"Used (\d+) registers")
_SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
_SMEM = re.compile(r"(\d+) bytes smem")


def ptxas_usage(source: str, arch: str) -> dict:
    """Registers, spills and static shared memory per kernel; {"error": ...} when nvcc fails."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return {"error": "nvcc not found on PATH"}
    with tempfile.TemporaryDirectory(prefix="tl-inspect-nvcc-") as tmp:
        path = os.path.join(tmp, "kernel.cu")
        with open(path, "w") as f:
            f.write(source)
        from tilelang.contrib.nvcc import default_compile_options

        cmd = [
            nvcc,
            "-cubin",
            "-O3",
            f"-arch={nvcc_target(arch)}",
            "-Xptxas=-v",
            "-w",
            *default_compile_options(),
            "-o",
            os.path.join(tmp, "kernel.cubin"),
            path,
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            return {"error": f"nvcc timed out after {NVCC_TIMEOUT_SECONDS} s"}
    text = proc.stdout + proc.stderr
    if proc.returncode != 0:
        errors = [ln for ln in text.splitlines() if "error" in ln]
        return {"error": (errors[0] if errors else text.strip().splitlines()[-1:] or ["nvcc failed"])[0][:300]}
    usage = {"registers": None, "spill_stores": 0, "spill_loads": 0, "smem_bytes": 0}
    if m := _USAGE.search(text):
        usage["registers"] = int(m.group(1))
    if m := _SPILLS.search(text):
        usage["spill_stores"], usage["spill_loads"] = int(m.group(1)), int(m.group(2))
    if m := _SMEM.search(text):
        usage["smem_bytes"] = int(m.group(1))
    return usage
