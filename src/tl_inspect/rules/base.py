"""The rule interface: every rule is one folder of this package, `rules/<slug with underscores>/`.

The folder's `__init__.py` holds the rule class; beside it, `bad_*.py` and `good_*.py` are complete
little TileLang files, its examples. In a BAD file each line where the rule must fire ends with
`# expect: <slug>`. A rule reads one kernel's artefacts through a `RuleContext` and reports through
`ctx.report(...)`; it never compiles and never calls another rule.

The class docstring is the rule's documentation, with the headings of `DOC_HEADINGS`. The test suite
compiles every example with the real tilelang, runs its rule alone on it and pins its findings in a
snapshot; the README's rules table is generated from the classes (`tl-inspect rules --format markdown`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, Iterable

from tl_inspect.analysis.kernel import KernelModel
from tl_inspect.model import Cost, Finding, Fix, Gain, KernelArtifact, Proof

if TYPE_CHECKING:
    from tl_inspect.files.cst import FixSource

EXPECT_MARKER = re.compile(r"#\s*expect:\s*([\w\-, ]+)")

REGISTRY: dict[str, type[Rule]] = {}


# the page of every rule has exactly these headings, in this order; the second names what the
# pattern costs: speed, correctness, or either
DOC_HEADINGS = (
    "What it does",
    ("Why is this slow?", "Why is this wrong?", "Why is this slow or wrong?"),
    "Example",
    "Use instead",
    "References",
)


@dataclass(frozen=True)
class RuleExample:
    """A complete Python file beside its rule's module, defining one or more kernels at module level."""

    slug: str
    path: str

    @property
    def name(self) -> str:
        """ "bad_matmul": the file name without `.py`."""
        return os.path.splitext(os.path.basename(self.path))[0]

    @property
    def bad(self) -> bool:
        return self.name.startswith("bad_")

    @property
    def text(self) -> str:
        with open(self.path, encoding="utf-8") as f:
            return f.read()


class Violation:
    """What a rule reports: a frozen dataclass whose class name is the remark's CamelCase name and whose
    fields are its arguments; `message()` and `fix_title()` phrase them (ruff's violation structs, LLVM's
    remark name and arguments). A subclass is declared `@dataclass(frozen=True)` beside its rule."""

    # a rule whose remarks differ in gravity (TLV003: a race is an error, a serialised reduction a
    # warning) gives each remark its own; None: the rule's severity
    severity: ClassVar[str | None] = None

    def message(self) -> str:
        raise NotImplementedError

    def fix_title(self) -> str | None:
        """The fix in the finding's own terms; None: the rule's general fix."""
        return None

    def autofix(self, source: FixSource, finding: Finding) -> Fix | None:
        """The source edit that removes `finding`, built from its fields with libcst in the user's names
        (`tl_inspect.fixes.fix_from`), or None where no mechanical edit does. Offered only once verified."""
        return None

    @property
    def name(self) -> str:
        return type(self).__name__

    def args(self) -> tuple:
        """(field, value) pairs with JSON-ready values."""
        return tuple((f.name, _plain(getattr(self, f.name))) for f in dataclasses.fields(self))


def _plain(value):
    if dataclasses.is_dataclass(value):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)


class RuleContext:
    """What a rule may read about one kernel, plus `report` to build findings: `facts` is the kernel
    model, one per kernel, shared by every rule that checks it."""

    def __init__(self, rule: Rule, kernel: KernelArtifact, source_text: str, facts: KernelModel | None = None):
        self.rule = rule
        self.kernel = kernel
        self.source_text = source_text
        self.facts = facts if facts is not None else KernelModel(kernel)
        self.findings: list[Finding] = []

    @functools.cached_property
    def source_lines(self) -> list[str]:
        return self.source_text.splitlines()

    @property
    def cst(self):
        """The user's file as a libcst module wrapped for position metadata, None if libcst cannot parse it."""
        from tl_inspect.files.cst import parse_source  # libcst loads only for the rules that read the tree

        return parse_source(self.source_text)

    def line_text(self, line: int) -> str:
        lines = self.source_lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def report(
        self,
        line: int,
        violation: Violation,
        *,
        end_line: int | None = None,
        cuda_lines: Iterable[int] | None = None,
        evidence: Iterable[str] = (),
        expected_bits: int | None = None,
        emitted_bits: int | None = None,
        col: int | None = None,
        cost: Cost | None = None,
        proof: Proof | None = None,
        gain: Gain | None = None,
    ) -> None:
        if cuda_lines is None:
            cuda_lines = self.kernel.cuda_lines_for(range(line, (end_line or line) + 1))
        if col is None:
            text = self.line_text(line)
            col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
        finding = Finding(
            rule=self.rule.code,
            slug=self.rule.slug,
            severity=violation.severity or self.rule.severity,
            message=violation.message(),
            fix=violation.fix_title() or self.rule.fix,
            file=self.kernel.file,
            line=line,
            kernel=self.kernel.name,
            end_line=end_line,
            cuda_lines=tuple(cuda_lines),
            evidence=tuple(evidence),
            expected_bits=expected_bits,
            emitted_bits=emitted_bits,
            col=col,
            cost=cost,
            proof=proof,
            gain=gain,
            name=violation.name,
            args=violation.args(),
        )
        self.findings.append(dataclasses.replace(finding, autofix=violation.autofix(self.fix_source, finding)))

    @functools.cached_property
    def fix_source(self) -> FixSource:
        from tl_inspect.files.cst import FixSource

        return FixSource(self.source_text)


class Rule:
    code: ClassVar[str]
    slug: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    fix: ClassVar[str]  # default fix title
    # the README's rules table: what the rule flags, and what it measured on the H200 (docs/gpu-impact.md)
    flags: ClassVar[str]
    measured: ClassVar[str] = ""
    # False for a rule that runs only when a selector names it (`--extend-select`, `--select`): what it
    # reports is not worth failing a run by default (a cost under 1.10x, a compiler's own heuristic)
    default: ClassVar[bool] = True
    # the cause kinds (tl_inspect.causes) whose verdicts this rule reports, and no other rule does
    reports_causes: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if inspect.isabstract(cls) or not getattr(cls, "code", None):
            return
        for other in REGISTRY.values():
            if other.code == cls.code or other.slug == cls.slug:
                raise ValueError(f"rule {cls.code}/{cls.slug} registered twice ({other.__name__})")
        REGISTRY[cls.code] = cls

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def documentation(cls) -> str:
        doc = inspect.cleandoc(cls.__doc__ or "")
        return doc.split("\n", 1)[1].strip() if "\n" in doc else ""

    @classmethod
    def why(cls) -> str:
        """The first paragraph under the page's `Why is this slow/wrong?` heading, on one line (up to a code
        block or a table, which a terminal line cannot show)."""
        match = re.search(r"^## Why[^\n]*\n+(.+?)(?:\n\n|\n```|\n\||\Z)", cls.documentation(), re.S | re.M)
        return " ".join(match.group(1).split()) if match else ""

    @classmethod
    def examples(cls) -> list[RuleExample]:
        """The `bad_*.py` and `good_*.py` files of the rule's folder, BAD first, each group by name."""
        folder = os.path.dirname(sys.modules[cls.__module__].__file__)
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py") and n.startswith(("bad_", "good_")))
        return [RuleExample(cls.slug, os.path.join(folder, n)) for n in names]

    def check(self, ctx: RuleContext) -> None:
        raise NotImplementedError


def expected_lines(text: str) -> dict[str, set[int]]:
    """`# expect: slug[, slug]` markers of a file: slug -> set of 1-based lines."""
    out: dict[str, set[int]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        match = EXPECT_MARKER.search(line)
        if match:
            for slug in match.group(1).split(","):
                if slug.strip():
                    out.setdefault(slug.strip(), set()).add(number)
    return out
