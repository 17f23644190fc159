from __future__ import annotations

from tl_inspect.causes import CauseKind
from tl_inspect.model import Cause


class AnnotatedLayout(CauseKind):
    """a layout fixed by `T.annotate_layout` that gives no thread contiguous elements"""

    name, chain_step, key = "annotated-layout", "per-thread", ("buffer",)
    proved_by = "the annotation dropped"
    same_function = True

    @staticmethod
    def because(c: Cause) -> str:
        return (f"the T.annotate_layout of {c.buffer} gives each thread elements a stride apart, never {c.width} "
                f"contiguous ones")

    @staticmethod
    def fix(c: Cause) -> str:
        return (f"drop the T.annotate_layout of {c.buffer} (tilelang then gives each thread contiguous elements), "
                f"or annotate a layout that does")

    @staticmethod
    def chain_answer(c: Cause) -> str:
        return f"T.annotate_layout fixes {c.buffer}'s layout: no thread owns {c.width} contiguous elements"

    @staticmethod
    def change(c: Cause) -> str | None:
        return f"the T.annotate_layout of {c.buffer} removed"

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites import drop_layout_annotation

        return drop_layout_annotation(func, c.buffer)
