"""The team workflow end to end, with real kernels compiled by the real inspector in temporary git
repositories: configuration, suppressions, baselines, changed files, statistics, progress, pre-commit."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys

from conftest import ROOT
from gitrepo import GIT_ENV, Repo

from tl_inspect.cli import main

KERNELS = """import tilelang
import tilelang.language as T


def ew_add(N, block=1024, threads=128, dtype=T.float16):
    @T.prim_func
    def ew_add_kernel(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), C: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]{comment}

    return ew_add_kernel

{extra}
add = ew_add({n})
"""
STORE_LINE = 10  # the statement lane-dependent-predicate flags in KERNELS when N = 2047, not when N = 2048
SLUG, CODE = "lane-dependent-predicate", "TLV002"
SCALE = """

def ew_scale(N, block=1024):
    @T.prim_func
    def ew_scale_kernel(A: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] * 2

    return ew_scale_kernel


scale = ew_scale(2047)
"""


SCALE_STORE = "C[bx * block + i] = A[bx * block + i] * 2"


def kernel_file(n: int = 2047, comment: str = "", extra: str = "") -> str:
    return KERNELS.format(n=n, comment=comment, extra=extra)


def line_of(text: str, statement: str) -> int:
    return [line.strip() for line in text.splitlines()].index(statement) + 1


def run(monkeypatch, capsys, cwd, *args: str) -> tuple[int, dict | None, str]:
    """`tl-inspect ARGS` in `cwd`, in this process; returns the exit status, the JSON report, stderr."""
    monkeypatch.chdir(cwd)
    report = os.path.join(str(cwd), "report.json")
    if os.path.exists(report):
        os.remove(report)
    status = main(["--format", "json", "-o", report, *args])
    err = capsys.readouterr().err
    document = None
    if os.path.exists(report):
        with open(report) as f:
            document = json.load(f)
    return status, document, err


def findings(document: dict) -> list[tuple[str, str, str, int]]:
    """(file name, kernel, SLUG, line) of every finding."""
    return sorted(
        (os.path.basename(f["file"]), k["name"], f["slug"], f["line"])
        for k in document["kernels"]
        for f in k["findings"]
    )


def test_config_precedence(tmp_path, monkeypatch, capsys):
    repo = Repo(tmp_path)
    # the factory is not instantiated in the file: the configuration's cases name the kernels
    repo.write("kernels/add.py", kernel_file().replace("add = ew_add(2047)\n", ""))
    repo.write(
        "pyproject.toml",
        f'''[tool.tl-inspect]
select = ["{SLUG}"]
arch = "sm_80"
fail-on = "error"
jobs = 1
[tool.tl-inspect.cases]
"kernels/add.py::ew_add" = [{{N = 2047}}, {{N = 2048}}]
''',
    )
    repo.commit("kernels and configuration")
    repo_path = tmp_path / "kernels"  # run below the pyproject.toml: the nearest one above is found

    status, document, _ = run(monkeypatch, capsys, repo_path, ".")
    assert document["arch"] == "sm_80"
    assert [k["name"] for k in document["kernels"]] == ["ew_add[N=2047]", "ew_add[N=2048]"]
    assert findings(document) == [("add.py", "ew_add[N=2047]", SLUG, STORE_LINE)]
    assert status == 0  # a warning, under the file's fail-on = "error"

    status, document, _ = run(monkeypatch, capsys, repo_path, "--arch", "sm_86", "--fail-on", "warning", ".")
    assert document["arch"] == "sm_86" and status == 1
    status, _, _ = run(monkeypatch, capsys, repo_path, "--fail-on", "warning", "--exit-zero", ".")
    assert status == 0

    # per-file-ignores, relative to the pyproject.toml
    with open(tmp_path / "pyproject.toml", "a") as f:
        f.write(f'[tool.tl-inspect.per-file-ignores]\n"kernels/*" = ["{SLUG}"]\n')
    status, document, _ = run(monkeypatch, capsys, repo_path, "--fail-on", "info", ".")
    assert findings(document) == [] and status == 0


def test_suppression_forms_and_unused_suppressions(tmp_path, monkeypatch, capsys):
    repo = Repo(tmp_path)
    repo.write("plain.py", kernel_file())
    repo.write("trailing.py", kernel_file(comment=f"  # tl-inspect: ignore[{SLUG}]"))
    repo.write("by_code.py", kernel_file(comment="  # tl-inspect: ignore[TLV0]"))
    above = kernel_file().replace(
        "                C[bx", f"                # tl-inspect: ignore[{SLUG}]\n                C[bx"
    )
    repo.write("above.py", above)
    repo.write("file_wide.py", kernel_file(extra=f"# tl-inspect: ignore-file[{SLUG}]\n"))
    repo.write("unused.py", kernel_file(n=2048, comment=f"  # tl-inspect: ignore[{SLUG}]"))
    repo.write("everything.py", kernel_file(n=2048, comment="  # tl-inspect: ignore[ALL]"))
    repo.write("misspelt.py", kernel_file(comment="  # tl-inspect: ignore[lane-dependent-predicat]"))
    repo.commit("suppressions")

    status, document, _ = run(monkeypatch, capsys, tmp_path, ".")
    assert status == 1
    assert findings(document) == [
        ("everything.py", "add", "unused-suppression", STORE_LINE),
        ("misspelt.py", "add", SLUG, STORE_LINE),
        ("misspelt.py", "add", "unused-suppression", STORE_LINE),
        ("plain.py", "add", SLUG, STORE_LINE),
        ("unused.py", "add", "unused-suppression", STORE_LINE),
    ]
    messages = {f["file"]: f["message"] for k in document["kernels"] for f in k["findings"] if f["rule"] == "TLV900"}
    assert (
        messages["./misspelt.py"]
        == "`tl-inspect: ignore[lane-dependent-predicat]` names no known rule: lane-dependent-predicat"
    )
    assert messages["./unused.py"] == f"unused suppression: no finding for {SLUG} on this statement"
    assert messages["./everything.py"] == "unused suppression: no finding for ALL on this statement"

    # unused-suppression is a rule like the others: it can be ignored, and it never fires for a rule
    # that was not run
    status, document, _ = run(monkeypatch, capsys, tmp_path, "--ignore", "unused-suppression", ".")
    assert [f[2] for f in findings(document)] == [SLUG, SLUG]
    status, document, _ = run(monkeypatch, capsys, tmp_path, "--select", "unused-suppression", "unused.py")
    assert findings(document) == [] and status == 0


def test_baseline_survives_a_line_shift_and_fails_on_a_new_defect(tmp_path, monkeypatch, capsys):
    repo = Repo(tmp_path)
    repo.write("kernels/add.py", kernel_file())
    repo.commit("kernels")
    status, document, err = run(monkeypatch, capsys, tmp_path, "--write-baseline", "baseline.json", "kernels")
    assert status == 0 and findings(document) == [("add.py", "add", SLUG, STORE_LINE)]
    assert "wrote 1 finding(s) to baseline.json" in err
    written = json.loads((tmp_path / "baseline.json").read_text())["findings"]
    assert [(e["file"], e["kernel"], e["slug"], e["count"]) for e in written] == [("kernels/add.py", "add", SLUG, 1)]
    repo.commit("baseline")

    status, document, err = run(monkeypatch, capsys, tmp_path, "--baseline", "baseline.json", "kernels")
    assert (status, findings(document)) == (0, [])
    assert "1 finding(s) baselined, 0 entries no longer occur" in err

    # lines added above the finding, and the statement reformatted: still the baselined finding
    shifted = '"""Elementwise kernels."""\n# more lines above the kernel\n\n' + kernel_file().replace(
        "A[bx * block + i] + B[bx * block + i]", "A[bx*block + i] + B[bx*block + i]"
    )
    repo.write("kernels/add.py", shifted)
    status, document, _ = run(monkeypatch, capsys, tmp_path, "--baseline", "baseline.json", "kernels")
    assert (status, findings(document)) == (0, [])

    # a new defect fails, and only it is reported
    with_scale = shifted.replace("add = ew_add(2047)\n", SCALE.lstrip("\n") + "add = ew_add(2047)\n")
    repo.write("kernels/add.py", with_scale)
    status, document, _ = run(monkeypatch, capsys, tmp_path, "--baseline", "baseline.json", "kernels")
    assert status == 1
    assert findings(document) == [("add.py", "scale", SLUG, line_of(with_scale, SCALE_STORE))]

    # the baselined defect fixed: its entry is listed as no longer occurring
    repo.write("kernels/add.py", shifted.replace("ew_add(2047)", "ew_add(2048)"))
    status, document, err = run(monkeypatch, capsys, tmp_path, "--baseline", "baseline.json", "kernels")
    assert (status, findings(document)) == (0, [])
    assert "0 finding(s) baselined, 1 entry no longer occur" in err
    assert f"  kernels/add.py add: {CODE} {SLUG}: C [ bx * block + i ] =" in err


def test_diff_against_and_new_only_on_a_two_commit_history(tmp_path, monkeypatch, capsys):
    repo = Repo(tmp_path)
    repo.write("a.py", kernel_file())
    repo.write("b.py", kernel_file())
    repo.commit("first")
    a_text = kernel_file(extra=SCALE)
    repo.write("a.py", a_text)
    repo.commit("second: a new kernel in a.py")
    scale_line = line_of(a_text, SCALE_STORE)

    status, document, _ = run(monkeypatch, capsys, tmp_path, "--diff-against", "HEAD~1", ".")
    assert [f["path"] for f in document["files"]] == ["./a.py"]
    assert findings(document) == [("a.py", "add", SLUG, STORE_LINE), ("a.py", "scale", SLUG, scale_line)]
    assert status == 1

    status, document, _ = run(monkeypatch, capsys, tmp_path, "--diff-against", "HEAD~1", "--new-only", ".")
    assert findings(document) == [("a.py", "scale", SLUG, scale_line)] and status == 1

    # nothing changed since HEAD: nothing to inspect is a clean run, not an error
    status, document, _ = run(monkeypatch, capsys, tmp_path, "--diff-against", "HEAD", ".")
    assert status == 0 and document["kernels"] == []

    status, _, err = run(monkeypatch, capsys, tmp_path, "--new-only", ".")
    assert status == 2 and err == "tl-inspect: error: --new-only needs --diff-against REV\n"


def test_statistics_and_rule_documentation(tmp_path, monkeypatch, capsys):
    repo = Repo(tmp_path)
    repo.write("a.py", kernel_file(extra=SCALE))
    repo.commit("kernels")
    monkeypatch.chdir(tmp_path)
    assert main(["--statistics", "a.py"]) == 1
    assert capsys.readouterr().out == f"    2  {CODE}  {SLUG}\n"
    assert main(["--statistics", "--format", "json", "a.py"]) == 1
    assert json.loads(capsys.readouterr().out) == [{"code": CODE, "name": SLUG, "count": 2}]

    assert main(["rules"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert any(line.startswith(f"{CODE}  {SLUG}") for line in listed)
    assert listed[-1].startswith("TLV900  unused-suppression")
    assert main(["rule", "unused-suppression"]) == 0
    text = capsys.readouterr().out
    for heading in ("What it does", "Why is this wrong?", "Example", "Use instead"):
        assert heading in text
    assert main(["rule", CODE]) == 0
    text = capsys.readouterr().out
    assert f"{CODE} {SLUG} (warning)" in text and "Why is this slow?" in text
    assert "GB/s" in text  # the measured figure from the rule's documentation
    assert main(["rule", "no-such-rule"]) == 2
    assert "unknown rule 'no-such-rule'" in capsys.readouterr().err


def _cli_command() -> list[str]:
    return [sys.executable, "-m", "tl_inspect"]


def _cli_env(**extra) -> dict:
    return {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), **extra}


def test_progress_bar_only_on_a_terminal(tmp_path):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(kernel_file(n=2048))
    command = [*_cli_command(), "--no-cache", "--format", "json", "a.py", "b.py"]
    piped = subprocess.run(command, cwd=tmp_path, env=_cli_env(), capture_output=True, text=True)
    assert piped.returncode == 0 and piped.stderr == ""
    assert len(json.loads(piped.stdout)["kernels"]) == 2

    leader, follower = pty.openpty()
    with subprocess.Popen(
        command, cwd=tmp_path, env=_cli_env(TERM="xterm"), stdout=subprocess.PIPE, stderr=follower
    ) as process:
        os.close(follower)
        terminal = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            terminal += chunk
        out = process.stdout.read().decode()
    os.close(leader)
    assert process.returncode == 0
    assert "inspecting" in terminal.decode(errors="replace")
    # the bar went to the terminal only: the report on stdout is intact
    assert json.loads(out) == json.loads(piped.stdout)


def test_pre_commit_try_repo(tmp_path):
    # the hook repository: the working tree's manifest, committed, as pre-commit requires
    hooks = Repo(tmp_path / "hooks")
    shutil.copy(os.path.join(ROOT, ".pre-commit-hooks.yaml"), hooks.path)
    hooks.commit("hook manifest")
    # the hook runs the `tl-inspect` on PATH (language: system): this checkout's
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tl-inspect").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tl_inspect "$@"\n')
    (bin_dir / "tl-inspect").chmod(0o755)

    project = Repo(tmp_path / "project")
    project.write("clean.py", kernel_file(n=2048))
    project.write("bad.py", kernel_file(n=2047))
    project.write("broken.py", "import tilelang\nraise RuntimeError('no GPU here')\n")
    project.write("setup.py", "raise SystemExit('setup.py must not be executed by the hook')\n")
    project.git("add", "-A")
    env = _cli_env(
        PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}", PRE_COMMIT_HOME=str(tmp_path / "cache"), **GIT_ENV
    )

    def try_repo(*files):
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", "try-repo", hooks.path, "tl-inspect", "--files", *files],
            cwd=project.path,
            env=env,
            capture_output=True,
            text=True,
        )

    passed = try_repo("clean.py", "setup.py")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "tl-inspect" in passed.stdout and "Passed" in passed.stdout

    failed = try_repo("clean.py", "bad.py", "broken.py")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "Failed" in failed.stdout
    assert f"bad.py:{STORE_LINE}" in failed.stdout and SLUG in failed.stdout
    assert "RuntimeError: no GPU here" in failed.stdout
