"""The rule interface: every rule is one class in one module of this package.

A rule reads one kernel's artefacts through a `RuleContext` and yields `Finding`s through
`ctx.report(...)`. Rules come in three kinds that share this interface and differ only in what they
read: "source" rules parse the user's file (libcst), "ir" rules read the TIR snapshots, "codegen" rules
read the CUDA text and its line map. Rules never compile and never call each other.

The class docstring is the rule's documentation, with the headings What it does / Why is this slow
(or wrong) / Example / Use instead / References. `BAD` and `GOOD` hold complete little TileLang files;
in a BAD file each line where the rule must fire ends with `# expect: <slug>`. The test suite compiles
every example of every rule with the real tilelang and checks the exact lines.
"""

from __future__ import annotations

import functools
import inspect
import re
import textwrap
from dataclasses import dataclass
from typing import ClassVar, Iterable

from tl_inspect.model import Cost, Finding, KernelArtifact, Proof

EXPECT_MARKER = re.compile(r"#\s*expect:\s*([\w\-, ]+)")

_REGISTRY: dict[str, type[Rule]] = {}


@dataclass(frozen=True)
class Example:
    """A complete Python file defining one or more kernels at module level."""

    code: str

    @property
    def text(self) -> str:
        return textwrap.dedent(self.code).lstrip("\n")


@functools.lru_cache(maxsize=8)
def parse_source(text: str):
    """Parsed once per file, not once per kernel and rule: a file often holds many kernels."""
    import libcst
    from libcst.metadata import MetadataWrapper

    try:
        return MetadataWrapper(libcst.parse_module(text))
    except libcst.ParserSyntaxError:
        return None


class RuleContext:
    """What a rule may read about one kernel, plus `report` to build findings."""

    def __init__(self, rule: Rule, kernel: KernelArtifact, source_text: str):
        self.rule = rule
        self.kernel = kernel
        self.source_text = source_text
        self.findings: list[Finding] = []

    @functools.cached_property
    def source_lines(self) -> list[str]:
        return self.source_text.splitlines()

    @property
    def cst(self):
        """The user's file as a libcst module wrapped for position metadata, None if libcst cannot parse it."""
        return parse_source(self.source_text)

    def line_text(self, line: int) -> str:
        lines = self.source_lines
        return lines[line - 1] if 0 < line <= len(lines) else ""

    def report(self, line: int, message: str, *, fix: str | None = None, end_line: int | None = None,
               cuda_lines: Iterable[int] | None = None, evidence: Iterable[str] = (),
               expected_bits: int | None = None, emitted_bits: int | None = None,
               severity: str | None = None, col: int | None = None, cost: Cost | None = None,
               proof: Proof | None = None) -> None:
        if cuda_lines is None:
            cuda_lines = self.kernel.cuda_lines_for(range(line, (end_line or line) + 1))
        if col is None:
            text = self.line_text(line)
            col = len(text) - len(text.lstrip()) + 1 if text.strip() else 1
        self.findings.append(Finding(
            rule=self.rule.code, slug=self.rule.slug, severity=severity or self.rule.severity,
            message=message, fix=fix or self.rule.fix, file=self.kernel.file, line=line,
            kernel=self.kernel.name, end_line=end_line, cuda_lines=tuple(cuda_lines),
            evidence=tuple(evidence), expected_bits=expected_bits, emitted_bits=emitted_bits, col=col,
            cost=cost, proof=proof,
        ))


class Rule:
    code: ClassVar[str]
    slug: ClassVar[str]
    severity: ClassVar[str]  # "error" | "warning" | "info"
    kind: ClassVar[str]  # "source" | "ir" | "codegen"
    fix: ClassVar[str]  # default fix title
    # False for a rule that runs only when a selector names it (`--extend-select`, `--select`): what it
    # reports is not worth failing a run by default (a cost under 1.10x, a compiler's own heuristic)
    default: ClassVar[bool] = True
    BAD: ClassVar[list] = []
    GOOD: ClassVar[list] = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if inspect.isabstract(cls) or not getattr(cls, "code", None):
            return
        for other in _REGISTRY.values():
            if other.code == cls.code or other.slug == cls.slug:
                raise ValueError(f"rule {cls.code}/{cls.slug} registered twice ({other.__name__})")
        _REGISTRY[cls.code] = cls

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def documentation(cls) -> str:
        doc = inspect.cleandoc(cls.__doc__ or "")
        return doc.split("\n", 1)[1].strip() if "\n" in doc else ""

    def check(self, ctx: RuleContext) -> None:
        raise NotImplementedError


def registered_rules() -> list[type[Rule]]:
    from tl_inspect import rules  # noqa: F401  (importing the package registers every rule)

    return sorted(_REGISTRY.values(), key=lambda r: r.code)


def find_rule(code_or_slug: str) -> type[Rule] | None:
    for rule in registered_rules():
        if code_or_slug in (rule.code, rule.slug):
            return rule
    return None


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
