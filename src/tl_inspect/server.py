"""`tl-inspect server`: a language server over stdio (pygls) for editors.

A file is checked when it is opened and each time it is saved, in a worker forked from one zygote that
the server keeps for its whole life (tilelang is imported once; a re-check costs the file's own
lowering). Each finding is a diagnostic on its statement's lines; hovering a flagged line shows the
finding's verdict, cost, proof and fix; each verified fix (tl_inspect.fixes) is a quick-fix code action.
Checks run one at a time on a background thread, so the editor is never kept waiting; a save that
arrives while its file is being checked queues one more check of it.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from tl_inspect._version import __version__
from tl_inspect.api import inspect
from tl_inspect.inspector.discovery.targets import tilelang_target
from tl_inspect.inspector.processes.zygote import kept_warm
from tl_inspect.model import SAFE, Finding
from tl_inspect.reports.common import cases_line, one_line
from tl_inspect.reports.phrases import cost_sentence, proof_summary

SOURCE = "tl-inspect"
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


class Checker:
    """The findings of each checked file, and the thread that checks the files asked for, in turn."""

    def __init__(self, server: LanguageServer):
        self.server = server
        self.findings: dict[str, list[Finding]] = {}  # by path, as last checked
        self.loop: asyncio.AbstractEventLoop | None = None  # the server's: only its thread writes to the client
        self._wanted: list[str] = []
        self._lock = threading.Condition()
        threading.Thread(target=self._loop, daemon=True).start()

    def request(self, path: str) -> None:
        """Check `path` soon; called by the handlers, on the server's event loop."""
        self.loop = asyncio.get_running_loop()
        with self._lock:
            if path not in self._wanted:
                self._wanted.append(path)
            self._lock.notify()

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._wanted:
                    self._lock.wait()
                path = self._wanted.pop(0)
            self._check(path)

    def _check(self, path: str) -> None:
        if not tilelang_target(path):
            # checking imports the file: one that does not import tilelang is not run (a setup.py would be)
            self._publish(path, [])
            return
        try:
            report = inspect(path, fixes=True)
        except Exception as exc:  # noqa: BLE001  (a config error or a bad file: say it in the editor, keep serving)
            self._publish(
                path,
                [
                    _diagnostic(
                        1,
                        None,
                        1,
                        f"tl-inspect could not check this file: {one_line(str(exc))}",
                        types.DiagnosticSeverity.Error,
                    )
                ],
            )
            return
        self.findings[path] = list(report.findings)
        diagnostics = [_finding_diagnostic(f) for f in report.findings if _same(f.file, path)]
        for file in report.run.files:
            if file.error:
                diagnostics.append(
                    _diagnostic(
                        file.error_line or 1,
                        None,
                        1,
                        f"could not import the file: {one_line(file.error)}",
                        types.DiagnosticSeverity.Error,
                    )
                )
            if file.needs_cases:
                diagnostics.append(
                    _diagnostic(
                        1,
                        None,
                        1,
                        "no call of its factories could be inferred, so they "
                        f"were not inspected; add {cases_line(file.needs_cases)}",
                        types.DiagnosticSeverity.Information,
                    )
                )
        for kernel in report.kernels:
            if not kernel.ok and _same(kernel.file, path):
                line = kernel.artifact.error_line or kernel.line or 1
                diagnostics.append(
                    _diagnostic(
                        line,
                        None,
                        1,
                        f"kernel {kernel.name} could not be compiled: {one_line(kernel.error or 'unknown error')}",
                        types.DiagnosticSeverity.Error,
                    )
                )
        self._publish(path, diagnostics)

    def _publish(self, path: str, diagnostics: list) -> None:
        self.loop.call_soon_threadsafe(
            self.server.text_document_publish_diagnostics,
            types.PublishDiagnosticsParams(uri=from_fs_path(path), diagnostics=diagnostics),
        )

    def at(self, path: str, line: int) -> list[Finding]:
        """The findings of `path` whose statement spans the 1-based `line`."""
        return [
            f for f in self.findings.get(path, ()) if _same(f.file, path) and f.line <= line <= (f.end_line or f.line)
        ]


def _same(a: str, b: str) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def _diagnostic(
    line: int, end_line: int | None, col: int, message: str, severity, code: str | None = None
) -> types.Diagnostic:
    # LSP counts from 0; the range runs to the start of the line after the statement, so it covers every column
    start, end = max(line, 1) - 1, max(end_line or line, line, 1)
    return types.Diagnostic(
        range=types.Range(
            start=types.Position(line=start, character=max(col, 1) - 1), end=types.Position(line=end, character=0)
        ),
        message=message,
        severity=severity,
        source=SOURCE,
        code=code,
    )


def _finding_diagnostic(f: Finding) -> types.Diagnostic:
    message = f"{f.message}\nfix: {f.fix}"
    return _diagnostic(
        f.line,
        f.end_line,
        f.col,
        message,
        SEVERITY.get(f.severity, types.DiagnosticSeverity.Warning),
        code=f"{f.rule} {f.slug}",
    )


def hover_text(f: Finding) -> str:
    """A finding as Markdown: the rule, the verdict (the message), the cost, the proof and the fix."""
    parts = [f"**{f.rule} `{f.slug}`** ({f.severity}) in kernel `{f.kernel}`", f.message]
    if f.cost is not None:
        parts.append(f"**cost:** {cost_sentence(f.cost)}")
    if f.proof is not None:
        parts.append(
            f"**proof:** {proof_summary(f.proof)}\n\n```cuda\n// before\n{f.proof.cuda_before.strip()}\n"
            f"// after\n{f.proof.cuda_after.strip()}\n```"
        )
    parts.append(f"**fix:** {f.fix}")
    if f.autofix is not None and f.autofix.verified:
        parts.append(f"a verified {f.autofix.applicability} fix is offered as a code action")
    return "\n\n".join(parts)


def build_server() -> LanguageServer:
    server = LanguageServer(SOURCE, __version__)
    checker = Checker(server)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        checker.request(to_fs_path(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        checker.request(to_fs_path(params.text_document.uri))

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: LanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        checker.findings.pop(path, None)
        ls.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[])
        )

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
        found = checker.at(to_fs_path(params.text_document.uri), params.position.line + 1)
        if not found:
            return None
        return types.Hover(
            contents=types.MarkupContent(
                kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(hover_text(f) for f in found)
            )
        )

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix])
    )
    def code_actions(ls: LanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        path = to_fs_path(params.text_document.uri)
        first, last = params.range.start.line + 1, params.range.end.line + 1
        actions = []
        for f in checker.findings.get(path, ()):
            if not (
                f.autofix
                and f.autofix.verified
                and _same(f.file, path)
                and f.line <= last
                and first <= (f.end_line or f.line)
            ):
                continue
            edits = [
                types.TextEdit(
                    range=types.Range(
                        start=types.Position(line=e.line - 1, character=0),
                        end=types.Position(line=e.end_line - 1, character=0),
                    ),
                    new_text=e.content,
                )
                for e in f.autofix.edits
            ]
            actions.append(
                types.CodeAction(
                    title=f"{f.rule}: {f.fix} ({f.autofix.applicability} fix, verified)",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[_finding_diagnostic(f)],
                    is_preferred=f.autofix.applicability == SAFE,
                    edit=types.WorkspaceEdit(changes={params.text_document.uri: edits}),
                )
            )
        return actions

    return server


def serve() -> None:
    # stdout is the protocol's channel: whatever else writes to it (a print, a library's C code) goes to stderr
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    with kept_warm():
        build_server().start_io(sys.stdin.buffer, channel)
