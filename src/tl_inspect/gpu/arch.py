"""What a CUDA arch means to tl-inspect: one value per arch, one way to read its spellings, one default."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_ARCH = "sm_90"


@dataclass(frozen=True)
class Arch:
    """One arch: the shared memory a block may opt in to, whether nvcc needs its arch-specific target, and
    the datasheet figures of the GPU that prices it (docs/verdicts.md, "The ledger", cites each): memory
    bandwidth, dense Tensor Core peaks by operand type (datasheets headline 2:4 sparsity, twice these; TF32
    for float32), the CUDA cores' float32 peak and the SM count. None where tl-inspect knows no figure."""

    name: str  # "sm_90"
    max_shared_kib: int | None = None
    # what tilelang emits for Hopper and Blackwell (wgmma, setmaxnreg) builds only for the arch-specific
    # target: nvcc refuses those instructions for plain sm_90
    arch_specific: bool = False
    gpu: str = ""  # the GPU the figures are of: for sm_90 the one tl-inspect is calibrated on
    bandwidth: float | None = None  # B/s
    tensor: dict | None = None  # operand dtype -> FLOP/s
    float32: float | None = None  # FLOP/s, an FMA counted as two
    sms: int | None = None  # streaming multiprocessors

    @property
    def nvcc_arch(self) -> str:
        return self.name + "a" if self.arch_specific else self.name

    @property
    def number(self) -> int:
        """90 for sm_90: the compute capability, to compare generations by."""
        digits = "".join(ch for ch in self.name if ch.isdigit())
        return int(digits) if digits else 0


def _tensor(fp16: float, fp8: float | None, int8: float, tf32: float) -> dict:
    peaks = {"float16": fp16, "bfloat16": fp16, "int8": int8, "float32": tf32}
    if fp8:
        peaks.update({"float8_e4m3": fp8, "float8_e5m2": fp8})
    return peaks


# the opt-in maximum of shared memory per block, in KiB, is CUDA's (CUDA C++ Programming Guide, "Technical
# Specifications per Compute Capability")
ARCHES = {
    arch.name: arch
    for arch in (
        Arch("sm_70", 96),
        Arch("sm_72", 96),
        Arch("sm_75", 64),
        Arch(
            "sm_80",
            163,
            gpu="A100 SXM4 80GB",
            bandwidth=2.039e12,
            tensor=_tensor(312e12, None, 624e12, 156e12),
            float32=19.5e12,
            sms=108,
        ),
        Arch("sm_86", 99),
        Arch("sm_87", 163),
        Arch(
            "sm_89",
            99,
            gpu="L40S",
            bandwidth=864e9,
            tensor=_tensor(362e12, 733e12, 733e12, 183e12),
            float32=91.6e12,
            sms=142,
        ),
        Arch(
            "sm_90",
            227,
            arch_specific=True,
            gpu="H200 SXM",
            bandwidth=4.8e12,
            tensor=_tensor(989.5e12, 1979e12, 1979e12, 494.5e12),
            float32=67e12,
            sms=132,
        ),
        Arch(
            "sm_100",
            227,
            arch_specific=True,
            gpu="HGX B200",
            bandwidth=8e12,
            tensor=_tensor(2250e12, 4500e12, 4500e12, 1100e12),
            float32=80e12,
            sms=148,
        ),
        Arch("sm_101", 227),
        Arch("sm_103", 227),
        Arch("sm_110", 227),
        Arch("sm_120", 99),
        Arch("sm_121", 99),
    )
}


def normalised(spelling: str) -> str:
    """ "sm_90" for "sm_90", "sm_90a", "sm_90f", "90" and "9.0" (the driver's compute capability): the arch
    without its arch- or family-specific suffix."""
    return "sm_" + spelling.strip().lower().removeprefix("sm_").replace(".", "").rstrip("af")


def of(spelling: str) -> Arch:
    """What the arch `spelling` names; an arch tl-inspect has no figures for is known by its name alone."""
    name = normalised(spelling)
    return ARCHES.get(name) or Arch(name)


def nvcc_target(spelling: str) -> str:
    """The arch nvcc builds a kernel for `spelling` with: the arch-specific target of a plain sm_90 or
    sm_100, else the arch as the user wrote it (a suffix they wrote is their choice)."""
    arch = of(spelling)
    return arch.nvcc_arch if spelling == arch.name else spelling
