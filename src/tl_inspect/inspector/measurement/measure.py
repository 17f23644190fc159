"""`--measure`: a kernel with a costly finding timed on this machine's GPU against each variant its proofs
lowered (the same PrimFuncs, kept by `lowering`), so a finding says what removing its cause gains here.

Both forms get the same seeded inputs, in several copies that their launches rotate through; each is
warmed up, then timed launch by launch with CUDA events, the L2 flushed before every launch, the two
forms' launches taking turns, over enough launches to move 2 GiB, in two passes (the second in the
opposite order). A form's time is the mean of the middle 80 % of its launches; a pair whose launches
spread as no quiet measurement does is timed again. Worker only: it imports torch and initialises CUDA.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

from tl_inspect.causes import kind_of, root
from tl_inspect.gpu.arch import nvcc_target
from tl_inspect.inspector.lowering import hooks
from tl_inspect.inspector.processes.errors import message_of, printable
from tl_inspect.inspector.rewrites.contiguous import reads_fewer_elements
from tl_inspect.model import KernelArtifact, KernelTiming, Measured, Verdict

# each form's timed launches move at least this much (its buffers' bytes): on the H200, 500 launches of a
# 4 MB pair taking turns gave medians within 1 % run to run for 20 of 23 pairs, where blocks of 64 launches
# (256 MB) differed by up to 2.3 % (docs/gpu-impact.md)
MOVED_BYTES = 2 << 30
MIN_LAUNCHES, MAX_LAUNCHES = 10, 2000  # a mean needs some; a tiny kernel must not take minutes
# a launch of a few microseconds runs up to 6 % faster or slower on one allocation of its buffers than on
# another, in one process and across processes; rotating through copies of the inputs (up to this many bytes
# of them, at most COPIES) times every launch over several allocations, and two processes then agree within
# 1 % on the same pair (docs/gpu-impact.md)
ROTATED_BYTES, COPIES = 256 << 20, 8
# the launch times of one form fall in modes about 0.2 us apart, and which mode holds the median moves from
# pass to pass (one 4 us pair's two passes: 1.057x and 1.096x); the mean of the middle 80 % follows the mix
TRIMMED = 0.1
WARMUP = 3
# GPU cycles queued before each timed launch (about 0.1 ms), more than the host takes to queue the flush, the
# events and the launch: otherwise the start event fires while the launch is still on its way from the host,
# and a kernel of a few microseconds is timed with the host's own overhead in it
QUEUED_AHEAD_CYCLES = 200_000
# on the H200, with every core busy, 73 of 2000 launches of 5 us were queued after their start event fired
# (4 of 2000 with the cores idle)
LATE_RETRIES = 5
# the spread of a measurement on the H200 was at most 0.065 in 143 of 145 over the fixtures; the other two,
# 0.77 and 1.78, were of launches disturbed mid-measurement (one of them 4x slower): such a pair is timed again
DISTURBED_SPREAD, RETIMES = 0.2, 2
SEED = 0
OUT_IDX_ATTR = "tilelang_out_idx"  # tilelang.jit.abi's name for a kernel's output parameters
TOLERANCE = 2e-2  # fp16/bf16 sums a vector form reassociates differ in the last bits
BUDGET_SPENT = "the run's measuring budget (--measure-budget) was spent before this kernel's turn"
FEWER_BYTES = (
    "the proof's variant reads fewer elements than the kernel (it only shows the index is the "
    "cause), so its time is not what the fix gains"
)


class Unmeasurable(Exception):
    """A kernel that cannot be run as it stands (a shape known only at run time): its one-line reason."""


class RunTimeValue(Unmeasurable):
    """A length or scalar known only at run time: `name`, which only the user can give a value."""

    def __init__(self, what: str, name: str):
        super().__init__(f"{what} is known only at run time")
        self.name = name


def how_to_give(artifact: KernelArtifact, name: str) -> str:
    """How the user gives run-time value `name` to `artifact`: `-a` reaches a kernel the file built already;
    a length or scalar that a factory leaves to run time no case of the factory can set."""
    if artifact.discovered_as in ("prim_func", "jit_kernel"):
        return f"give it a value: {artifact.file}::{artifact.name.split('[')[0]} -a {name}=VALUE"
    return f"the factory {artifact.factory or artifact.name} leaves it to run time, so no case gives it a value"


def measure_kernel(artifact: KernelArtifact, prim_func, pass_configs: dict, variants: dict, budget) -> KernelArtifact:
    """`artifact` with `measured` (or `unmeasured`, the reason) on every costly access whose proof's
    variant is in `variants` (the proof's change -> (PrimFunc, the causes it removes)), and timed itself
    (`timing`, or `untimed` with the reason): from its first pair where one was timed, else on its own;
    `budget` is the run's `device.Budget`."""
    case = dict(artifact.case)
    costly = {id(a): a.proof.change for a in artifact.accesses if a.verdict == Verdict.COSTLY and a.proof is not None}
    changes = list(dict.fromkeys(change for change in costly.values() if change in variants))
    outcome: dict = {change: FEWER_BYTES for change in changes if reads_fewer_elements(change)}
    changes = [change for change in changes if change not in outcome]
    original = original_kernel = None
    for change in changes:
        # forms compile beside the other workers' (nvcc takes seconds); their inputs are allocated and filled,
        # and their launches timed, holding the GPU: no worker's fills run while another's launches are timed
        if budget.left() <= 0:
            outcome[change] = BUDGET_SPENT
            continue
        try:
            if original_kernel is None:
                original_kernel = compiled(prim_func, case, artifact.arch, pass_configs)
            variant_kernel = compiled(variants[change][0], case, artifact.arch, pass_configs)
            with budget.held() as seconds_left:
                if seconds_left() <= 0:
                    outcome[change] = BUDGET_SPENT
                    continue
                if original is None:
                    original = Form(prim_func, case, artifact.arch, kernel=original_kernel)
                variant = Form(
                    variants[change][0], _assumed(variants[change][0], case), artifact.arch, kernel=variant_kernel
                )
                outcome[change] = compare(original, variant, _same_function(variants[change][1]))
        except RunTimeValue as exc:
            outcome[change] = f"{exc} ({how_to_give(artifact, exc.name)})"
        except Unmeasurable as exc:
            outcome[change] = str(exc)
        except Exception as exc:  # noqa: BLE001 - a form that does not build or run loses its own timing only
            outcome[change] = _failure(exc)

    def measured(access):
        found = outcome.get(costly.get(id(access)))
        if found is None:
            return access
        if isinstance(found, Measured):
            return replace(access, measured=found)
        return replace(access, unmeasured=f"not measured: {found}")

    artifact = replace(artifact, accesses=tuple(measured(a) for a in artifact.accesses))
    paired = next((found for found in outcome.values() if isinstance(found, Measured)), None)
    if paired is not None:
        return replace(artifact, timing=_timing(artifact, paired.ms_before, paired.gpu, paired.spread))
    return _timed_alone(artifact, prim_func, pass_configs, budget, original_kernel)


def _timed_alone(artifact: KernelArtifact, prim_func, pass_configs: dict, budget, kernel) -> KernelArtifact:
    """`artifact` with its own launches timed, as a pair's are, or with the reason they were not."""
    import torch

    try:
        if budget.left() <= 0:
            raise Unmeasurable(BUDGET_SPENT)
        kernel = kernel or compiled(prim_func, dict(artifact.case), artifact.arch, pass_configs)
        with budget.held() as seconds_left:
            if seconds_left() <= 0:
                raise Unmeasurable(BUDGET_SPENT)
            form = Form(prim_func, dict(artifact.case), artifact.arch, kernel=kernel)
            times = launch_times(form)
            for _ in range(RETIMES):
                if _spread_of(times) <= DISTURBED_SPREAD:
                    break
                times = min(times, launch_times(form), key=_spread_of)
            return replace(
                artifact,
                timing=_timing(artifact, typical_ms(times[form]), torch.cuda.get_device_name(), _spread_of(times)),
            )
    except RunTimeValue as exc:
        return replace(artifact, untimed=f"not measured: {exc} ({how_to_give(artifact, exc.name)})")
    except Unmeasurable as exc:
        return replace(artifact, untimed=f"not measured: {exc}")
    except Exception as exc:  # noqa: BLE001 - a kernel that does not build or run loses its own timing only
        return replace(artifact, untimed=f"not measured: {_failure(exc)}")


def _timing(artifact: KernelArtifact, ms: float, gpu: str, spread_: float) -> KernelTiming:
    ledger = artifact.ledger
    return KernelTiming(
        time_us=round(ms * 1e3, 3),
        gpu=gpu,
        moved_bytes=ledger.unique_bytes if ledger else None,
        spread=round(spread_, 4),
    )


def _failure(exc: Exception) -> str:
    return f"{type(exc).__name__}: {(printable(message_of(exc)).splitlines() or [''])[0][:200]}"


def _same_function(causes: tuple) -> bool:
    return all(kind_of(root(cause)).same_function for cause in causes)


class Form:
    """One form of a kernel, compiled with nvcc (unless `kernel` is the compiled one already), with its
    inputs allocated and filled, in as many copies as fit ROTATED_BYTES (at most COPIES); `case`: the
    values of its run-time lengths and scalars."""

    def __init__(self, func, case: dict, arch: str, pass_configs: dict | None = None, kernel=None):
        import torch

        self.kernel = kernel or compiled(func, case, arch, pass_configs)
        self.args = self._arguments(func, case, torch)
        self.tensors = [a for a in self.args if isinstance(a, torch.Tensor)]
        self.bytes = sum(t.numel() * t.element_size() for t in self.tensors)
        self.copies = [self.args] + [self._arguments(func, case, torch) for _ in range(copies_of(self.bytes) - 1)]
        self.launches = 0

    @staticmethod
    def _arguments(func, case: dict, torch) -> list:
        return [_argument(func, param, case, index, torch) for index, param in enumerate(func.params)]

    def launch(self) -> None:
        """One launch, on the next copy of the inputs."""
        self.kernel(*self.copies[self.launches % len(self.copies)])
        self.launches += 1


def compiled(func, case: dict, arch: str, pass_configs: dict | None = None):
    """`func` compiled with nvcc for `arch`, once every parameter's value is known (else Unmeasurable,
    before nvcc runs)."""
    import tilelang
    import torch
    from tvm.target import Target

    for param in func.params:
        _parameter(func, param, case, torch)
    # a `@tilelang.jit(out_idx=...)` kernel allocates its outputs at every launch: timed, it takes every
    # buffer as an argument, as a PrimFunc does
    if func.attrs is not None and OUT_IDX_ATTR in func.attrs:
        func = func.without_attr(OUT_IDX_ATTR)
    return tilelang.compile(
        func, target=Target(hooks.cuda_target(nvcc_target(arch))), pass_configs=pass_configs or None
    )


def _parameter(func, param, case: dict, torch):
    """(the buffer's shape, its torch dtype), or the scalar's value from the case."""
    buffer = func.buffer_map.get(param)
    if buffer is None:
        return _known(param, case, f"the scalar argument {param.name}")
    shape = [_known(d, case, f"the length {d} of {buffer.name}") for d in buffer.shape]
    dtype = getattr(torch, str(buffer.dtype), None)
    if not isinstance(dtype, torch.dtype):
        raise Unmeasurable(f"{buffer.name} is {buffer.dtype}, which torch has no tensors of")
    return shape, dtype


def _argument(func, param, case: dict, index: int, torch):
    """The value of one parameter: a tensor of its shape filled from a seeded generator, or a scalar
    from the case."""
    if param not in func.buffer_map:
        return _parameter(func, param, case, torch)
    shape, dtype = _parameter(func, param, case, torch)
    generator = torch.Generator(device="cuda").manual_seed(SEED + index)
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator, device="cuda").to(dtype)
    # 0 and 1 only: a buffer of indices stays in bounds
    return torch.randint(0, 2, shape, generator=generator, device="cuda").to(dtype)


def _assumed(func, case: dict) -> dict:
    """`case` with each run-time length that `func` assumes a multiple of k (`T.assume(N % 8 == 0)`, a
    proof's variant) rounded up to one: run at the user's length, such a variant would read and write past
    its buffers. It then times what padding the length gains."""
    from tvm import tirx

    rounded = dict(case)

    def visit(node):
        if not (isinstance(node, tirx.Call) and getattr(node.op, "name", "") == "tirx.assume"):
            return
        fact = node.args[0]
        if (
            isinstance(fact, tirx.EQ)
            and isinstance(fact.a, tirx.FloorMod)
            and isinstance(fact.a.a, tirx.Var)
            and isinstance(fact.a.b, tirx.IntImm)
            and str(rounded.get(fact.a.a.name, "")).isdigit()
        ):
            multiple = int(fact.a.b)
            rounded[fact.a.a.name] = str(-(-int(rounded[fact.a.a.name]) // multiple) * multiple)

    tirx.stmt_functor.post_order_visit(func.body, visit)
    return rounded


def _known(value, case: dict, what: str) -> int:
    if hasattr(value, "value"):
        return int(value.value)
    name = str(value)
    if name in case and case[name].lstrip("-").isdigit():
        return int(case[name])
    raise RunTimeValue(what, name)


def compare(before: Form, after: Form, same_function: bool) -> Measured:
    """`before` timed against `after` (slowdown per byte each moves); their outputs compared when
    `same_function`."""
    import torch

    agree = _outputs_agree(before, after, torch) if same_function else None
    times = launch_times(before, after)
    for _ in range(RETIMES):
        if _spread_of(times) <= DISTURBED_SPREAD:
            break
        times = min(times, launch_times(before, after), key=_spread_of)
    ms_before, ms_after = typical_ms(times[before]), typical_ms(times[after])
    return Measured(
        slowdown=round((ms_before / before.bytes) / (ms_after / after.bytes), 3),
        ms_before=round(ms_before, 4),
        ms_after=round(ms_after, 4),
        gpu=torch.cuda.get_device_name(),
        spread=round(_spread_of(times), 4),
        outputs_agree=agree,
    )


def launch_times(*forms: Form) -> dict:
    """Form -> milliseconds of its launches: each warmed up, then timed in two passes of launches taking
    turns (the second pass in the opposite order). Taking turns, both forms see the same clocks and
    neighbours: a drift between two blocks of launches is most of what two runs of a 5 us launch
    disagree by."""
    import torch

    flush = torch.empty(2 * torch.cuda.get_device_properties(0).L2_cache_size, dtype=torch.uint8, device="cuda")
    for form in forms:
        for _ in range(WARMUP * len(form.copies)):
            form.launch()
    count = max(launch_count(f.bytes) for f in forms)
    passes = [_taking_turns(order, count, flush, torch) for order in (forms, forms[::-1])]
    return {form: [ms for p in passes for ms in p[form]] for form in forms}


def copies_of(nbytes: int) -> int:
    """How many copies of a form's inputs, `nbytes` in all, its launches rotate through."""
    return min(COPIES, max(1, ROTATED_BYTES // max(nbytes, 1)))


def launch_count(nbytes: int) -> int:
    """How many timed launches of a form whose buffers hold `nbytes` move MOVED_BYTES (MIN_ to MAX_LAUNCHES)."""
    return min(MAX_LAUNCHES, max(MIN_LAUNCHES, math.ceil(MOVED_BYTES / max(nbytes, 1))))


def typical_ms(times: list) -> float:
    """The mean of the middle 80 % of `times`."""
    kept = sorted(times)[int(len(times) * TRIMMED) : math.ceil(len(times) * (1 - TRIMMED))]
    return statistics.fmean(kept)


def _spread_of(times: dict) -> float:
    return max(spread(t) for t in times.values())


def spread(times: list) -> float:
    """The interquartile range over the median."""
    q1, _, q3 = statistics.quantiles(times, n=4)
    return (q3 - q1) / statistics.median(times)


def _outputs_agree(before: Form, after: Form, torch) -> bool:
    """One launch of each on the same inputs, then every buffer compared (the outputs among them)."""
    before.kernel(*before.args)
    after.kernel(*after.args)
    torch.cuda.synchronize()
    return len(before.tensors) == len(after.tensors) and all(
        b.shape == a.shape and torch.allclose(b.float(), a.float(), rtol=TOLERANCE, atol=TOLERANCE, equal_nan=True)
        for b, a in zip(before.tensors, after.tensors)
    )


def _taking_turns(forms: tuple, count: int, flush, torch) -> dict:
    """Form -> milliseconds of `count` single launches of each, the forms taking turns (A B, then B A,
    so neither always follows the other)."""
    times: dict = {form: [] for form in forms}
    for turn in range(count):
        for form in forms if turn % 2 == 0 else forms[::-1]:
            times[form].append(_launch_ms(form, flush, torch))
    return times


def _launch_ms(form: Form, flush, torch) -> float:
    """Milliseconds of one launch after the L2 flush, queued behind a sleep and waited for before the
    next, so it never waits on the host. A launch the host queued only after its start event had fired
    (the host held up for longer than the sleep, as while other workers compile) is timed again."""
    for _ in range(LATE_RETRIES):
        torch.cuda._sleep(QUEUED_AHEAD_CYCLES)
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        form.launch()
        late = start.query()
        end.record()
        end.synchronize()
        if not late:
            break
    return start.elapsed_time(end)
