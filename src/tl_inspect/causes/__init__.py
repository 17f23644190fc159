"""The closed list of causes: why a global access is narrower or less coalesced than its block
footprint allows. One module per kind, each declaring a `CauseKind`: how the cause is phrased (why,
fix, the explain chain's answer: `Phrase` templates over the cause's fields), what identifies one
instance of it (the one change that removes it), and that change as a proof rebuilds the kernel with it.

Detection is the analysis' (`tl_inspect.analysis.detection.UnitPlan`), which makes `tl_inspect.model.Cause`
values of these kinds; which rule reports a kind is the rule's own declaration (`reports_causes`).
Nothing here imports tilelang at module level: a cause names the rewrite that removes it, and imports
it from `tl_inspect.inspector.rewrites` (which knows nothing of causes) when it runs, in the worker.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import pkgutil
import string
from typing import Any, Callable, ClassVar, Mapping

from tl_inspect.model import Cause
from tl_inspect.wording import article, plural

# the explain chain's questions, in the TileLang book's order; a cause fails one of them
CHAIN = (
    ("index", "Is the index contiguous in the lane variable?"),
    ("predicate", "Is the bounds check uniform inside the vector group?"),
    ("cast", "Does a precision cast cap the lanes?"),
    ("store", "Does the store index advance with the lane?"),
    ("per-thread", "Does each thread move a whole vector, coalesced?"),
)

KINDS: dict[str, type[CauseKind]] = {}

# what any kind's phrases may name besides the cause's fields, made from the cause when named
WORDS: Mapping[str, Callable[[Cause], object]] = {
    "a_width": lambda c: article(c.width),  # "an 8-element vector"
    "n_elements": lambda c: plural(c.elements, "element"),
}


class Phrase:
    """A phrase of a cause kind: a `str.format` template over the fields of a `Cause` of the kind and the
    kind's `words` ("{index} is interleaved with the loop's other {buffer} accesses"). A kind phrased
    apart for some of its causes (a constant length, a run-time one) gives one template per form that
    `CauseKind.form` names, the first for every other form; None where a form has no such phrase. A phrase
    that needs more than words (a fragment layout's, which is its origin's) is a static method instead."""

    def __init__(self, template: str | None, **forms: str | None):
        self.templates = {"": template, **forms}

    def __get__(self, instance: CauseKind | None, owner: type[CauseKind]) -> Callable[[Cause], Any]:
        return functools.partial(self.render, owner)

    def render(self, kind: type[CauseKind], cause: Cause) -> str | None:
        template = self.templates.get(kind.form(cause), self.templates[""])
        return None if template is None else template.format_map(_Named(kind, cause))

    def names(self) -> set[str]:
        """The fields and words its templates name."""
        return {
            field
            for template in self.templates.values()
            if template is not None
            for _, field, _, _ in string.Formatter().parse(template)
            if field is not None
        }


class _Named:
    """What a phrase names: a word of the kind's, made when named, else a field of the cause."""

    def __init__(self, kind: type[CauseKind], cause: Cause):
        self.kind, self.cause = kind, cause

    def __getitem__(self, name: str) -> object:
        word = self.kind.words.get(name)
        return word(self.cause) if word is not None else getattr(self.cause, name)


class CauseKind:
    """One kind of cause. Subclasses set the class attributes and declare their phrases once, as `Phrase`
    templates; the docstring's first paragraph says what the cause is (docs/verdicts.md's causes table)."""

    name: ClassVar[str]
    chain_step: ClassVar[str]  # the step of `CHAIN` it fails
    key: ClassVar[tuple[str, ...]] = ("loop_line", "buffer")  # the Cause fields that identify one instance
    proved_by: ClassVar[str]  # the proof's change, in general terms
    # a cause that another loop's cause produced (a fragment layout) is that cause's instance, owner and fix
    follows_origin: ClassVar[bool] = False
    # an index without a rewrite of its own is proven by reading the lane-contiguous index: in every access
    # of its buffer in the loop where the pattern spans several (interleaved pairs), else in the one at fault
    loop_pattern: ClassVar[bool] = False
    # the proof's variant computes what the kernel computes (a loop reordered, a tile grown), so --measure
    # checks its outputs against the kernel's; not so for a padded length or a lane-contiguous index read
    same_function: ClassVar[bool] = False
    # what shows a cause of this kind costs what it does: "rebuild", a rewrite that removes it and shows the
    # access improve; "static", the launch and the index algebra, for a fix no rewrite of one access
    # reproduces (a row spread over a block's threads), priced by the cost table's terms
    evidence: ClassVar[str] = "rebuild"
    # its fix spreads the work over every lane and fills the GPU, rather than changing the accesses alone
    restructures: ClassVar[bool] = False

    # words its phrases name besides the cause's fields and `WORDS` (which it may narrow)
    words: ClassVar[Mapping[str, Callable[[Cause], object]]] = {}

    # why the access is narrow, in the user's terms: the second half of a finding's message
    because: Callable[[Cause], str]
    # the answer at the chain step this cause fails
    chain_answer: Callable[[Cause], str]
    # the fix in this cause's terms; None: the owning rule's general fix
    fix = Phrase(None)
    # the change a proof makes, in the user's terms; None when no rewrite removes this cause
    change = Phrase(None)

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # a kind's words are those of every kind it derives from, and its own
        words = dict(WORDS)
        for base in reversed(cls.__mro__):
            words.update(vars(base).get("words", {}))
        cls.words = words
        # a misspelt name fails the import, not the one message that would have said it
        known = {f.name for f in dataclasses.fields(Cause)} | set(cls.words)
        for attribute, phrase in vars(cls).items():
            unknown = phrase.names() - known if isinstance(phrase, Phrase) else set()
            if unknown:
                raise NameError(f"{cls.__name__}.{attribute} names {sorted(unknown)}: neither a Cause field nor a word")
        if "name" not in vars(cls):
            return  # a family's shared base (a length off the vector width), no kind of its own
        if cls.name in KINDS:
            raise ValueError(f"cause kind {cls.name} declared twice")
        KINDS[cls.name] = cls

    @classmethod
    def summary(cls) -> str:
        """The docstring's first paragraph, on one line."""
        return " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())

    @classmethod
    def instance(cls, cause: Cause) -> tuple:
        return tuple(getattr(cause, name) for name in cls.key)

    @staticmethod
    def form(cause: Cause) -> str:
        """The form of its phrases a cause of this kind takes (`Phrase`); "" for the first."""
        return ""

    @staticmethod
    def rewrite(func, cause: Cause):
        """The PrimFunc `func` with the change made (None when it cannot be made); worker only."""
        return None

    @staticmethod
    def autofix(cause: Cause, source, finding):
        """The proof's change made in the user's file (a `tl_inspect.model.Fix`, built with libcst by
        `tl_inspect.files.cst`), or None where no edit of the source makes it."""
        return None

    @classmethod
    def variant(cls, func, cause: Cause):
        """(the PrimFunc `func` with the change made, the change in the user's terms), or None; worker only.
        A kind whose change depends on the kernel (how far a grid divides) says it from what it made."""
        change = cls.change(cause)
        rebuilt = cls.rewrite(func, cause) if change is not None else None
        return (rebuilt, change) if rebuilt is not None else None

    @staticmethod
    def block_scale(cause: Cause) -> float:
        """How many times more each thread block moves once the cause is gone (a larger tile): the block
        floor of the kernel's estimate falls as much."""
        return 1.0

    @classmethod
    def has_static_evidence(cls, cause: Cause) -> bool:
        """Whether the launch and the index algebra alone show this cause costs what it does."""
        return cls.evidence == "static"

    @staticmethod
    def launch_facts(cause: Cause, access, ledger) -> str:
        """The facts of the launch and of its index algebra a static gain rests on, in the user's terms."""
        return ""

    @staticmethod
    def realign(cause: Cause, arguments: dict) -> dict:
        """The factory arguments (of those a kernel was built with) that carry the length at fault, each
        rounded up to the vector width: calling the factory with them removes the cause, with every
        constant it derives from them. Empty where no argument carries it."""
        return {}

    @staticmethod
    def recalled(cause: Cause, before, after) -> str | None:
        """What the factory called again with `realign`'s arguments changed, said after those arguments
        (`after` is the PrimFunc it built, `before` the kernel's own); None where that kernel is not the
        variant the proof needs, which the PrimFunc rewrite then makes. Worker only."""
        return f"a multiple of {cause.width}"


def kind_of(cause: Cause) -> type[CauseKind]:
    return KINDS[cause.kind]


def root(cause: Cause) -> Cause:
    """The cause whose removal removes this one: a fragment layout's origin, else the cause itself."""
    while kind_of(cause).follows_origin and cause.origin is not None:
        cause = cause.origin
    return cause


def instance_key(cause: Cause) -> tuple:
    """What identifies one cause instance: the one change that removes it (and that its proof makes),
    whichever loops it touches."""
    cause = root(cause)
    return cause.kind, kind_of(cause).instance(cause)


def as_written(cause: Cause, line_text: Callable[[int], str | None]) -> Cause:
    """The cause with the index it names as the user's statement writes it."""
    from tl_inspect.wording import written_in

    if cause.origin is not None:
        cause = dataclasses.replace(cause, origin=as_written(cause.origin, line_text))
    if cause.index and cause.buffer and cause.index_line:
        return dataclasses.replace(
            cause, index=written_in(line_text(cause.index_line) or "", cause.buffer, cause.index)
        )
    return cause


def round_up(value: int, width: int) -> int:
    return -(-value // width) * width


for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")
