"""`tl-inspect server` driven by a real LSP client (pygls's) over stdio, on real kernels compiled by the
real inspector: a diagnostic on the finding's line when the file is opened, a hover with the verdict and
the fix, the verified fix as a code action, and a re-check on save by the same warm worker."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys

from conftest import ROOT
from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

EXAMPLE = os.path.join(ROOT, "src", "tl_inspect", "rules", "missing_clear", "bad_row_sum_tiles.py")
FINDING_LINE = 13  # `T.reduce_sum(x, s, dim=1, clear=False)`, 1-based
CLEAR_LINE = "        T.clear(s)\n"  # what the verified fix inserts after `s`'s declaration


def children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return {int(word) for word in f.read().split()}


async def session(tmp_path) -> None:
    path = str(tmp_path / "row_sum.py")
    shutil.copyfile(EXAMPLE, path)
    uri = from_fs_path(path)
    document = types.TextDocumentIdentifier(uri=uri)
    published: asyncio.Queue = asyncio.Queue()
    client = LanguageClient("tl-inspect-test", "1")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def diagnostics(ls, params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    await client.start_io(sys.executable, "-m", "tl_inspect", "server", env=env, cwd=str(tmp_path))
    try:
        result = await client.initialize_async(
            types.InitializeParams(
                process_id=os.getpid(), root_uri=from_fs_path(str(tmp_path)), capabilities=types.ClientCapabilities()
            )
        )
        assert result.server_info.name == "tl-inspect"
        assert result.capabilities.hover_provider and result.capabilities.code_action_provider
        client.initialized(types.InitializedParams())
        # a Python file that does not import tilelang is not imported, so never run
        setup = tmp_path / "setup.py"
        setup.write_text(f"open({str(tmp_path / 'ran')!r}, 'w')\n")
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=from_fs_path(str(setup)), language_id="python", version=1, text=setup.read_text()
                )
            )
        )
        skipped = await asyncio.wait_for(published.get(), timeout=60)
        assert skipped.uri == from_fs_path(str(setup)) and list(skipped.diagnostics) == []
        assert not (tmp_path / "ran").exists()
        with open(path) as f:
            text = f.read()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
            )
        )

        opened = await asyncio.wait_for(published.get(), timeout=300)
        assert opened.uri == uri
        [diagnostic] = opened.diagnostics
        assert diagnostic.range.start.line == FINDING_LINE - 1
        assert diagnostic.code == "TLV004 missing-clear" and diagnostic.source == "tl-inspect"
        assert diagnostic.severity == types.DiagnosticSeverity.Error
        assert "\nfix: " in diagnostic.message
        warm = children(client._server.pid)
        assert len(warm) == 1, "one zygote, kept between checks"

        hover = await client.text_document_hover_async(
            types.HoverParams(text_document=document, position=types.Position(line=FINDING_LINE - 1, character=12))
        )
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert hover.contents.value.startswith("**TLV004 `missing-clear`** (error) in kernel `row_sum_tiles`")
        assert "**fix:**" in hover.contents.value and "verified safe fix" in hover.contents.value
        nothing = await client.text_document_hover_async(
            types.HoverParams(text_document=document, position=types.Position(line=2, character=0))
        )
        assert nothing is None

        [action] = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=document,
                range=diagnostic.range,
                context=types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
        [edit] = action.edit.changes[uri]
        lines = text.splitlines(keepends=True)
        start, end = edit.range.start.line, edit.range.end.line
        fixed = "".join(lines[:start]) + edit.new_text + "".join(lines[end:])
        assert CLEAR_LINE in fixed.splitlines(keepends=True)

        # the editor applies the fix and saves: the same zygote checks the file again, and it is clean
        with open(path, "w") as f:
            f.write(fixed)
        client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=document))
        saved = await asyncio.wait_for(published.get(), timeout=300)
        assert saved.uri == uri and list(saved.diagnostics) == []
        assert children(client._server.pid) == warm

        await client.shutdown_async(None)
        client.exit(None)
        assert await asyncio.wait_for(client._server.wait(), timeout=30) == 0
    finally:
        if client._server.returncode is None:  # a failed assertion: the server must not outlive the test
            client._server.terminate()
        await client.stop()


def test_server_diagnoses_hovers_fixes_and_rechecks_on_save(tmp_path):
    asyncio.run(session(tmp_path))


WATCHED = """import tilelang.language as T


def ew_scale(N, block=1024):
    @T.prim_func
    def ew_scale_kernel(A: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2

    return ew_scale_kernel


scale = ew_scale({n})
"""


def test_watch_checks_again_when_a_file_changes(tmp_path):
    import subprocess
    import threading

    (tmp_path / "kernels").mkdir()
    kernel = tmp_path / "kernels" / "scale.py"
    kernel.write_text(WATCHED.format(n=2047))
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    missing = subprocess.run(
        [sys.executable, "-m", "tl_inspect", "--watch", "nowhere"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert missing.returncode == 2 and missing.stderr == "tl-inspect: error: nowhere: no such file or directory\n"
    watcher = subprocess.Popen(
        [sys.executable, "-m", "tl_inspect", "--watch", "kernels", "--format", "concise"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stuck = threading.Timer(120, watcher.kill)  # a watcher that never reports must not hang the suite
    stuck.start()
    try:

        def until_watching() -> list[str]:
            lines = []
            while not lines or lines[-1] != "tl-inspect: watching for changes (Ctrl-C stops)":
                line = watcher.stderr.readline()
                assert line, f"the watcher ended: {lines}"
                lines.append(line.rstrip("\n"))
            return lines

        until_watching()
        first = [watcher.stdout.readline() for _ in range(2)]
        assert first[0].startswith("kernels/scale.py:9:17: TLV002 [lane-dependent-predicate]"), first
        kernel.write_text(WATCHED.format(n=2048))
        assert until_watching()[0] == "tl-inspect: changed: kernels/scale.py"
        assert (
            watcher.stdout.readline()
            == "Files: 1 file with kernels, 0 with factories but no inferable call, 0 failed\n"
        )
    finally:
        stuck.cancel()
        watcher.send_signal(signal.SIGINT)  # Ctrl-C, as docs/editors.md says
        watcher.wait(timeout=30)
    assert watcher.returncode == 130 and watcher.stderr.read() == "tl-inspect: interrupted\n"
