from __future__ import annotations

from tl_inspect.causes import CauseKind, Phrase
from tl_inspect.model import Cause


class AnnotatedLayout(CauseKind):
    """a layout fixed by `T.annotate_layout` that gives no thread contiguous elements"""

    name, chain_step, key = "annotated-layout", "per-thread", ("buffer",)
    proved_by = "the annotation dropped"
    same_function = True

    because = Phrase(
        "the T.annotate_layout of {buffer} gives each thread elements a stride apart, never {width} contiguous ones"
    )
    fix = Phrase(
        "drop the T.annotate_layout of {buffer} (tilelang then gives each thread contiguous elements), or annotate "
        "a layout that does"
    )
    chain_answer = Phrase("T.annotate_layout fixes {buffer}'s layout: no thread owns {width} contiguous elements")
    change = Phrase("the T.annotate_layout of {buffer} removed")

    @staticmethod
    def rewrite(func, c: Cause):
        from tl_inspect.inspector.rewrites.primfunc import drop_layout_annotation

        return drop_layout_annotation(func, c.buffer)

    @staticmethod
    def autofix(c: Cause, source, finding):
        """The `T.annotate_layout` of the buffer dropped, as the proof dropped it: its entry of the dict, or
        the whole statement when the buffer is its only entry (unsafe: the layout may have been chosen for
        another tile operation, or for the bank conflicts it avoids)."""
        import libcst as cst

        from tl_inspect.files.cst import call_name
        from tl_inspect.fixes import fix_from
        from tl_inspect.model import UNSAFE

        for statement in source.nodes(cst.SimpleStatementLine):
            call = statement.body[0].value if isinstance(statement.body[0], cst.Expr) else None
            if not (
                isinstance(call, cst.Call)
                and call_name(call) == "annotate_layout"
                and call.args
                and isinstance(call.args[0].value, cst.Dict)
            ):
                continue
            layout = call.args[0].value
            entries = [
                e
                for e in layout.elements
                if isinstance(e, cst.DictElement) and isinstance(e.key, cst.Name) and e.key.value == c.buffer
            ]
            if not entries:
                continue
            if len(entries) == len(layout.elements):
                return fix_from(UNSAFE, source.text, source.removed(statement))
            kept = [e for e in layout.elements if e is not entries[0]]
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
            return fix_from(UNSAFE, source.text, source.replaced(layout, layout.with_changes(elements=kept)))
        return None
