"""The numbers the cost model prices accesses with, one table per GPU.

The package ships the H200's (`cost_tables/H200.json`, from docs/gpu-impact.md, "Calibration of the cost
model"); `tl-inspect calibrate` fits the same terms on the local GPU and writes its own table to
`<cache>/cost/<GPU name>.json`, which later runs on that GPU use. A run prices with one table: the one
`--gpu NAME` names, else the fitted one of a GPU on this machine, else the H200's. The worker is handed
the table with its job (so a cached result is keyed by the numbers it was priced with) and hands it to
the analysis, which prices with it (tl_inspect.analysis.pipeline.analyse).
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, replace
from importlib import resources

from tl_inspect.files.cache_dir import cache_dir

SHIPPED = "shipped"

# name -> what the term is, in the units the cost model uses it in
TERMS = {
    "two_bytes_per_thread": "slowdown of an access moving one 16-bit element per thread",
    "four_bytes_per_thread": "slowdown of an access moving 4 bytes per thread",
    "narrow_coalesced": "slowdown of a coalesced access narrower than 32 bits",
    "held_narrow_loads": "slowdown of narrow loads held in registers, 32-127 per thread",
    "held_narrow_loads_spilled": "slowdown of narrow loads held in registers, 128 or more per thread",
    "interleaved_loads": "slowdown of narrow loads of every other element",
    "staged_half_vector": "slowdown of one 64-bit load per thread staged before a barrier",
    "transposed_load": "slowdown of loads with lanes a row apart",
    "transposed_store": "slowdown of 2-byte stores with lanes a row apart",
    "spread_store_8": "slowdown of stores with lanes 8 B apart, for the store's bytes",
    "spread_store_16": "slowdown of stores with lanes 16 B apart, for the store's bytes",
    "spread_store_wide": "slowdown of stores with lanes more than 16 B apart, for the store's bytes",
    "l1_bytes_per_wavefront": "bytes one L1 wavefront delivers in the time full memory speed takes for them",
    "vector_row_walk": "slowdown of a thread walking its own row with 16-byte loads",
    "lone_thread_walk": "slowdown of one thread per block walking its row alone",
    "lone_thread_vector_walk": "slowdown of one thread per block walking its row alone with 128-bit loads",
    "block_floor_bytes": "bytes a thread block could move in the time the block itself takes",
    "float_ops_per_ns": "float operations per ns the GPU's cores sustain",
    "full_speed_bytes_per_ns": "bytes per ns a streaming kernel moves",
    "launch_ns": "ns a launch takes besides moving its bytes",
    "lone_thread_element_ns": "ns a thread walking its row alone takes per element, however wide its loads",
    "walk_load_ns": "ns a thread walking its own row beside others takes per narrow load, at any grid size",
    "walk_vector_load_ns": "ns a thread walking its own row beside others takes per 16-byte load",
    "walk_store_ns": "ns a thread walking its own row beside others takes per store a line per lane",
    "bytes_in_flight": "bytes a launch's threads must keep requested at once for full memory speed",
    "loop_loads_in_flight": "loads of one loop a thread keeps in flight at once",
    "streaming_read_bytes_per_ns": "bytes per ns a launch that keeps enough in flight reads, the L2 flushed",
    "streaming_write_bytes_per_ns": "bytes per ns a launch that keeps enough in flight writes, the L2 flushed",
    "l2_bytes_per_ns": "bytes per ns the L2 serves re-reads at",
    "tensor_peak_fraction": "the part of the dense tensor-core peak tilelang's T.gemm kernels sustain",
}


class CostTableError(Exception):
    """A table that cannot be used: its one-line reason."""


@dataclass(frozen=True)
class CostTable:
    gpu: str  # "NVIDIA H200", as the driver names it
    terms: tuple  # ((name, value), ...) in TERMS order
    origin: str = SHIPPED  # SHIPPED, or the path of a table `tl-inspect calibrate` wrote

    def __getitem__(self, name: str) -> float:
        return dict(self.terms)[name]

    @property
    def short_name(self) -> str:
        """ "H200" for "NVIDIA H200": what the sentences call the GPU."""
        return re.sub(r"^(NVIDIA|Tesla)\s+", "", self.gpu).strip() or self.gpu

    @property
    def on_gpu(self) -> str:
        """ "on an H200", "on a B200": the letter's name decides the article."""
        article = "an" if self.short_name[:1].upper() in "AEFHILMNORSX" else "a"
        return f"on {article} {self.short_name}"

    @property
    def launch_bytes(self) -> int:
        """What moves at full speed in the time a launch takes: below it, the launch hides most of what
        an access loses (on the H200 an fp16 add with a tail guard against its aligned twin: 1.00x at 2^16
        elements, 1.05x at 2^18, 1.45x at 2^20, 1.90x at 2^22, 2.55x at 2^26)."""
        return int(self["launch_ns"] * self["full_speed_bytes_per_ns"])

    def describe(self) -> str:
        """ "the H200 table shipped with tl-inspect", "the NVIDIA A100 table fitted in /path"."""
        if self.origin == SHIPPED:
            return f"the {self.short_name} cost table shipped with tl-inspect"
        return f"the {self.short_name} cost table fitted by `tl-inspect calibrate` ({self.origin})"

    def as_dict(self) -> dict:
        return {"gpu": self.gpu, "origin": self.origin}

    def with_term(self, name: str, value: float) -> CostTable:
        return replace(self, terms=tuple((n, value if n == name else v) for n, v in self.terms))


def from_dict(data, origin: str) -> CostTable:
    """The table in `data` (a table file's JSON); every term must be there, a positive number."""
    if not isinstance(data, dict) or not isinstance(data.get("gpu"), str) or not isinstance(data.get("terms"), dict):
        raise CostTableError(f'{origin}: not a tl-inspect cost table (needs "gpu" and "terms")')
    terms = dict(data["terms"])
    if origin != SHIPPED:
        # a table fitted before a term existed prices that term as the shipped table does
        terms = {**{name: value for name, value in shipped().terms if name not in terms}, **terms}
    missing = [name for name in TERMS if name not in terms]
    if missing:
        raise CostTableError(f"{origin}: the cost table has no {', '.join(missing)}")
    bad = [
        name
        for name in TERMS
        if isinstance(terms[name], bool) or not isinstance(terms[name], (int, float)) or not terms[name] > 0
    ]
    if bad:
        raise CostTableError(f"{origin}: the cost table's {', '.join(bad)} must be positive numbers")
    return CostTable(gpu=data["gpu"], terms=tuple((name, float(terms[name])) for name in TERMS), origin=origin)


@functools.cache
def shipped() -> CostTable:
    text = resources.files("tl_inspect.gpu").joinpath("cost_tables", "H200.json").read_text()
    return from_dict(json.loads(text), SHIPPED)


def table_dir() -> str:
    return os.path.join(cache_dir(), "cost")


def file_name(gpu: str) -> str:
    """The table file of a GPU: its name with anything but letters, digits, '-' and '.' as '_'."""
    return re.sub(r"[^A-Za-z0-9.-]+", "_", gpu).strip("_") + ".json"


def read(path: str) -> CostTable:
    try:
        with open(path) as f:
            data = json.load(f)
    except OSError as exc:
        raise CostTableError(f"{path}: cannot read the cost table: {exc.strerror}") from None
    except ValueError as exc:
        raise CostTableError(f"{path}: the cost table is not JSON: {exc}") from None
    return from_dict(data, path)


def same_gpu(wanted: str, gpu: str) -> bool:
    """Whether `wanted` (as a user writes it: "h200", "A100-SXM4-80GB") names `gpu` (as CUDA names it)."""

    def squashed(name):
        return re.sub(r"[^a-z0-9]", "", re.sub(r"^(nvidia|tesla)\s+", "", name.lower()))

    return squashed(wanted) == squashed(gpu)


def select(gpu: str | None, local_gpus=None) -> CostTable:
    """The table a run prices with. `gpu` (--gpu NAME) must name a fitted table or the shipped one;
    without it, the fitted table of one of `local_gpus` (a callable listing this machine's GPU names,
    asked only when some fitted table exists), else the shipped one."""
    fitted = _fitted_tables()
    base = shipped()
    if gpu:
        for path in fitted:
            table = read(path)
            if same_gpu(gpu, table.gpu):
                return table
        if same_gpu(gpu, base.gpu):
            return base
        known = sorted({base.short_name, *(read(path).short_name for path in fitted)})
        raise CostTableError(
            f"--gpu {gpu}: no cost table for that GPU (tables: {', '.join(known)}; "
            f"`tl-inspect calibrate` on one fits its own)"
        )
    if fitted and local_gpus is not None:
        names = local_gpus()
        for path in fitted:
            table = read(path)
            if any(same_gpu(name, table.gpu) for name in names):
                return table
    return base


def _fitted_tables() -> list:
    folder = table_dir()
    try:
        return sorted(os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".json"))
    except OSError:
        return []


def of(table: CostTable | None) -> CostTable:
    """A result's table: the one it names, or the shipped one (results that name none were priced with it)."""
    return table if table is not None else shipped()
