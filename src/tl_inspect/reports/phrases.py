"""Sentences every renderer shares: a finding's message is the problem only, and the formats that show
one line per finding add its cost here, in one wording."""

from __future__ import annotations

from tl_inspect.analysis.cost import WALK
from tl_inspect.gpu import cost_table
from tl_inspect.gpu.cost_table import CostTable
from tl_inspect.model import Access, Cost, Finding, Measured, Proof
from tl_inspect.reports.common import times, us
from tl_inspect.wording import byte_count, byte_size


def cost_sentence(cost: Cost) -> str:
    """ "Estimated 2.62x slower for the whole kernel on an H200 (fp16 loads ..., 2.62x per access).\""""
    measured = cost.basis.split(":")[0]
    per_access = f", {cost.per_access:.2f}x per access" if cost.per_access is not None else ""
    table = cost_table.of(cost.table)
    return (
        f"Estimated {cost.estimate:.2f}x slower for the whole kernel {table.on_gpu} ({measured}{per_access})"
        f"{size_caveat(cost)}{measured_clause(cost.measured, cost.unmeasured)}."
    )


def measured_clause(measured: Measured | None, unmeasured: str) -> str:
    """ "; measured 2.63x on this NVIDIA H200 (...)", "; not measured: ..." after --measure, else ""."""
    if measured is not None:
        return f"; {measured_text(measured)}"
    return f"; {unmeasured}" if unmeasured else ""


def measured_text(measured: Measured) -> str:
    """ "measured 2.63x on this NVIDIA H200 (0.972 / 0.370 ms, spread 1.2%, outputs agree)"."""
    outputs = {
        True: "outputs agree",
        False: "outputs DIFFER from the kernel's",
        None: "outputs not compared: the variant computes another function",
    }[measured.outputs_agree]
    return (
        f"measured {measured.slowdown:.2f}x on this {measured.gpu} ({measured.ms_before:.3f} / "
        f"{measured.ms_after:.3f} ms, spread {100 * measured.spread:.1f}%, {outputs})"
    )


def size_caveat(cost: Cost) -> str:
    """ ", and 1.39x at this launch's size (6.0 MiB, which the launch's own 4 us partly hides)" where the
    launch is too small for the whole loss to show; "" otherwise."""
    if cost.at_size is None or cost.at_size >= 0.95 * cost.estimate:
        return ""
    table = cost_table.of(cost.table)
    if cost.at_size_limit == WALK:
        why = "where a thread walking its row alone takes about as long in either form"
    else:
        why = f"which the launch's own {table['launch_ns'] / 1000:.3g} us partly hides"
    return f", and {cost.at_size:.2f}x at this launch's size ({byte_size(cost.launch_bytes)}, {why})"


# what shows a gain, by its evidence's kind (tl_inspect.model.Finding.evidence_kind)
EVIDENCE = {
    "rebuild": "the kernel rebuilt without the cause",
    "static": "the launch and its index algebra",
    "measured": "the kernel and its fix timed on this GPU",
}


def gain_sentence(finding: Finding) -> str:
    """ "Estimated 690 us for this launch on an H200 against a floor of 4.6 us; the fix brings it to 5.1 us
    (135x faster), shown by the launch and its index algebra (16 of 128 threads work ...)"."""
    gain = finding.gain
    table = cost_table.of(finding.cost.table if finding.cost is not None else None)
    facts = gain.shows.split(": estimated")[0]
    return (
        f"Estimated {us(gain.time_us)} for this launch {table.on_gpu} against a floor of {us(gain.floor_us)}; "
        f"the fix brings it to {us(gain.fixed_us)} ({times(gain.factor)} faster), shown by "
        f"{EVIDENCE[gain.evidence]} ({facts})."
    )


def headline(finding: Finding) -> str:
    """The message with the cost, for formats that show a finding as one sentence."""
    if finding.gain is None:
        return f"{finding.message} {cost_sentence(finding.cost)}" if finding.cost is not None else finding.message
    message = finding.message if finding.message.endswith(".") else f"{finding.message}."
    if finding.gain.evidence == "static":
        return f"{message} {gain_sentence(finding)}"
    floor = ""
    if finding.cost is not None:
        gain = finding.gain
        floor = (
            f" This launch: {us(gain.time_us)} against a floor of {us(gain.floor_us)}, {us(gain.fixed_us)} once fixed."
        )
    return f"{message} {cost_sentence(finding.cost)}{floor}" if finding.cost is not None else message


# why a cause that costs its accesses COSTLY or more costs the kernel less (analysis/workload.py)
HIDDEN_BY = {"compute": "as its arithmetic takes longer than its memory traffic"}


def access_cost_text(access: Access, table: CostTable | None) -> str:
    """ "2.93x per access on an H200; 2.93x for the whole kernel (lanes 16 B apart ...)", "" without a cost;
    `table` is the one the kernel was priced with (None: the shipped one)."""
    if access.cost is None:
        return ""
    kernel_cost = f"; {access.kernel_cost:.2f}x for the whole kernel" if access.kernel_cost else ""
    if access.gain is not None:
        kernel_cost += (
            f"; its fix takes this launch from {us(access.gain.time_us)} to {us(access.gain.fixed_us)} "
            f"({times(access.gain.factor)})"
        )
    elif access.kernel_cost and access.kernel_cost_at_size and access.kernel_cost_at_size < 0.95 * access.kernel_cost:
        kernel_cost += f", {access.kernel_cost_at_size:.2f}x at this launch's size"
    hidden = f", {HIDDEN_BY[access.reason]}" if access.reason in HIDDEN_BY else ""
    return (
        f"{access.cost:.2f}x per access {cost_table.of(table).on_gpu}{kernel_cost}{hidden} ({access.cost_basis})"
        f"{measured_clause(access.measured, access.unmeasured)}"
    )


def proof_summary(proof: Proof) -> str:
    """ "rebuilt with the length 2047 padded to 2048 (a multiple of 8): 16 -> 128 bits, neighbouring
    threads 16 B -> 16 B apart"."""
    return (
        f"rebuilt with {proof.change}: {proof.bits_before} -> {proof.bits_after} bits, neighbouring threads "
        f"{byte_count(proof.stride_before)} -> {byte_count(proof.stride_after)} apart"
    )
