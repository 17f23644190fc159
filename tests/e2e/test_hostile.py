"""Hostile inputs and faults (issue 9): nothing lost, nothing left running, one clear line, exit 2.

Each test inspects its own hostile file from tests/data/hostile with the real tilelang."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import ROOT, inspect_files, run_cli

from tl_inspect.cli import main

HOSTILE = os.path.join(ROOT, "tests", "data", "hostile")


def hostile(name: str) -> str:
    return os.path.join(HOSTILE, name)


def kernels_of(document: dict) -> dict:
    return {k["name"]: (k["status"], k["error"]) for k in document["kernels"]}


def assert_one_line(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr[-3000:]
    for line in stderr.splitlines():
        assert line.startswith("tl-inspect: "), stderr[-3000:]


def test_a_500_term_sum_is_checked_by_every_rule_in_the_parent():
    """Defect 1: rules, renderers and the result cache recurse on expression depth."""
    for _ in range(2):  # the second run is served from the cache
        proc = run_cli(hostile("long_sum.py"), "--format", "json", "--exit-zero")
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert kernels_of(json.loads(proc.stdout)) == {"long_sum": ("ok", None), "doubled": ("ok", None)}
    assert json.loads(proc.stdout)["files"][0]["cached"]


def test_a_rule_that_fails_fails_only_that_kernel(monkeypatch, capsys, tmp_path):
    """Defect 1: a rule's exception is a one-line error of its kernel, the other kernels keep their findings."""
    from tl_inspect.rules.missing_clear import MissingClear

    original = MissingClear.check

    def fails_on_long_sum(self, ctx):
        if ctx.kernel.name == "long_sum":
            raise RecursionError("maximum recursion depth exceeded")
        return original(self, ctx)

    monkeypatch.setattr(MissingClear, "check", fails_on_long_sum)
    report = tmp_path / "report.json"
    status = main([hostile("long_sum.py"), "--format", "json", "-o", str(report)])
    err = capsys.readouterr().err
    assert status == 2
    kernels = kernels_of(json.loads(report.read_text()))
    assert kernels == {
        "long_sum": (
            "error",
            "internal error in rule TLV004 missing-clear: RecursionError: maximum recursion depth exceeded",
        ),
        "doubled": ("ok", None),
    }
    assert_one_line(err)


def test_kernels_after_a_crash_or_a_hang_are_inspected_by_a_fresh_worker():
    """Defect 2: a segfault or a timeout in one kernel costs that kernel only, not the rest of its file."""
    proc = run_cli(hostile("crashes_and_hangs_mid_file.py"), "--format", "json", "--timeout", "5")
    assert proc.returncode == 2
    assert kernels_of(json.loads(proc.stdout)) == {
        "scaled[N=2048]": ("ok", None),
        "scaled[N=0]": ("error", "worker crashed (SIGSEGV) while compiling this kernel"),
        "scaled[N=1]": ("error", "worker timed out after 5 s while compiling this kernel"),
        "scaled[N=4096]": ("ok", None),
    }
    assert_one_line(proc.stderr)


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie, dead but not yet reaped, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_no_process_or_temporary_folder_outlives_the_run(tmp_path):
    """Defect 3: a child forked at import, a `setsid` daemon and a temporary folder."""
    record = tmp_path / "record"
    env = {**os.environ, "HOSTILE_RECORD": str(record), "TMPDIR": str(tmp_path)}
    proc = run_cli(hostile("leaves_processes.py"), "--format", "json", env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    child, daemon, folder = record.read_text().split()
    deadline = time.monotonic() + 5
    while (alive(int(child)) or alive(int(daemon))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(int(child)) and not alive(int(daemon))
    assert not os.path.exists(folder) and not list(tmp_path.glob("tl-inspect-*"))


def test_a_run_that_compiles_nothing_stops_the_worker_it_started_first(tmp_path):
    """Issue 14: the worker starts before the command line is read; a usage error or a run served from
    the cache stops it, and its scratch folder goes."""
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    assert run_cli(hostile("long_sum.py"), "--exit-zero", env=env).returncode == 0
    cached = run_cli(hostile("long_sum.py"), "--format", "json", "--exit-zero", env=env)
    assert json.loads(cached.stdout)["files"][0]["cached"]
    assert run_cli(hostile("long_sum.py"), "--fail-on", "bogus", env=env).returncode == 2
    assert not list(tmp_path.glob("tl-inspect-*"))
    assert not [pid for pid in os.listdir("/proc") if pid.isdigit() and _runs_in(int(pid), str(tmp_path))]


def _runs_in(pid: int, folder: str) -> bool:
    """True when the process `pid` was started with an argument inside `folder` (the zygote's scratch)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return folder.encode() in f.read()
    except OSError:
        return False


@pytest.mark.parametrize(
    "signals,status,said",
    [
        ((signal.SIGTERM,), 143, "tl-inspect: terminated"),
        ((signal.SIGINT, signal.SIGINT), 130, "tl-inspect: interrupted"),
    ],
)
def test_sigterm_or_a_second_ctrl_c_still_cleans_up(tmp_path, signals, status, said):
    """Defect 3: workers, their children and the scratch folder go on SIGTERM and on Ctrl-C twice."""
    record = tmp_path / "record"
    env = {**os.environ, "HOSTILE_RECORD": str(record), "TMPDIR": str(tmp_path)}
    run = subprocess.Popen(
        [sys.executable, "-m", "tl_inspect", hostile("hangs.py")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not record.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    for number in signals:
        run.send_signal(number)
        time.sleep(0.02)
    _, err = run.communicate(timeout=30)
    assert (run.returncode, err.strip().splitlines()[-1]) == (status, said), err[-3000:]
    for pid in map(int, record.read_text().split()):
        assert not alive(pid)
    assert not list(tmp_path.glob("tl-inspect-*"))


def test_a_file_that_hoards_memory_is_stopped_at_the_worker_limit():
    """Defect 4: `--max-memory` (default: the machine's memory / jobs) bounds each worker."""
    proc = run_cli(hostile("hoards_memory.py"), "--format", "json", "--max-memory", "1G")
    assert proc.returncode == 2
    document = json.loads(proc.stdout)
    # the module's names hold the hoard, so they are dropped with it: the file is one error
    assert kernels_of(document) == {
        "<module>": (
            "error",
            "MemoryError: over the memory limit of 1024 MiB per worker (--max-memory) (while importing the module)",
        )
    }
    assert_one_line(proc.stderr)


def test_the_cache_follows_what_the_import_read_when_it_read_it(tmp_path, private_cache):
    """Defect 5: a file saved during the run, a JSON file and an environment variable read at import."""
    user_file = tmp_path / "reads_inputs.py"
    user_file.write_text(open(hostile("reads_inputs.py")).read())
    sizes = tmp_path / "sizes.json"
    sizes.write_text('{"N": 1024}')

    def run(**env):
        proc = run_cli(str(user_file), "--format", "json", "--exit-zero", env={**os.environ, **env})
        assert proc.returncode == 0, proc.stderr[-3000:]
        document = json.loads(proc.stdout)
        source = document["kernels"][0]["source"] if "source" in document["kernels"][0] else ""
        return document["files"][0]["cached"], source

    assert run()[0] is False
    assert run()[0] is True
    sizes.write_text('{"N": 2048}')
    assert run()[0] is False
    assert run(HOSTILE_SCALE="3")[0] is False
    assert run(HOSTILE_SCALE="3")[0] is True
    assert run(HOSTILE_SCALE="3", HOSTILE_SAVE_DURING_RUN="1")[0] is False
    # the result came from the file as it was read, so the saved version is compiled afresh
    assert run(HOSTILE_SCALE="3", HOSTILE_SAVE_DURING_RUN="1")[0] is False


def test_the_cache_follows_relative_paths_missing_modules_and_files_and_pythonpath(tmp_path, private_cache):
    """Issue 20, class 3: a file read relative to the current folder, an optional import that starts to
    succeed (beside the file, or in a PYTHONPATH folder), an optional file that appears, PYTHONPATH itself."""
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(hostile("stale_inputs.py"), source / "stale_inputs.py")
    first, second, extra = tmp_path / "first", tmp_path / "second", tmp_path / "extra"
    for folder, scale in ((first, 2), (second, 3)):
        folder.mkdir()
        (folder / "relative_scale.json").write_text(json.dumps({"scale": scale}))
    extra.mkdir()

    def cached(cwd, pythonpath=""):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (pythonpath, os.environ.get("PYTHONPATH")) if p)}
        proc = run_cli(str(source / "stale_inputs.py"), "--format", "json", "--exit-zero", cwd=cwd, env=env)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout)["files"][0]["cached"]

    assert cached(first) is False
    assert cached(first) is True
    assert cached(second) is False  # another relative_scale.json
    (first / "double.flag").write_text("")
    assert cached(first) is False
    assert cached(first) is True
    assert cached(first, str(extra)) is False  # PYTHONPATH changed
    assert cached(first, str(extra)) is True
    (extra / "optional_sizes.py").write_text("N = 2048\n")
    assert cached(first, str(extra)) is False  # the optional import now succeeds
    (source / "optional_sizes.py").write_text("N = 4096\n")
    assert cached(first, str(extra)) is False  # and is now found earlier on the path
    assert cached(first, str(extra)) is True


def test_a_misnamed_case_costs_only_itself():
    """Defect 6: a TL_INSPECT_CASES entry naming nothing, or something that cannot be called."""
    proc = run_cli(hostile("misnamed_cases.py"), "--format", "json")
    assert proc.returncode == 2
    assert kernels_of(json.loads(proc.stdout)) == {
        "scaeld": ("error", "TL_INSPECT_CASES entry 'scaeld': no kernel or factory named 'scaeld' in this file"),
        "SIZE": ("error", "TL_INSPECT_CASES entry 'SIZE': 'SIZE' is a int, not a factory"),
        "scaled[N=2048]": ("ok", None),
    }
    assert_one_line(proc.stderr)


def test_files_and_folders_that_cannot_be_read_are_named_not_skipped(tmp_path):
    """Defect 7: a byte-order mark before `import tilelang`, a file and a folder that cannot be read."""
    shutil.copy(hostile("byte_order_mark.py"), tmp_path / "byte_order_mark.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "missing.py")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        proc = run_cli(str(tmp_path), "--format", "json")
    finally:
        locked.chmod(0o755)
    assert proc.returncode == 2
    errors = {os.path.basename(f["path"]): f["error"] for f in json.loads(proc.stdout)["files"]}
    expected = {"byte_order_mark.py": None, "dangling.py": "cannot read this file: No such file or directory"}
    if os.geteuid() != 0:  # root reads any folder
        expected["locked"] = "cannot read this folder: Permission denied"
    assert errors == expected
    assert kernels_of(json.loads(proc.stdout))["doubled"] == ("ok", None)
    only = run_cli(hostile("byte_order_mark.py"), "--only-tilelang", "--format", "json")
    assert [k["name"] for k in json.loads(only.stdout)["kernels"]] == ["doubled"]


def test_the_parent_reads_only_regular_files_of_bounded_size(tmp_path):
    """Issue 20, class 2: a scanned `x.py` linked to /dev/zero, a FIFO, a sparse 100 GiB file, a FIFO as
    --config; and (class 7) an unrelated pyproject.toml above with `tool = 5`. Each is one error, at once."""
    scan = tmp_path / "scan"
    scan.mkdir()
    shutil.copy(hostile("byte_order_mark.py"), scan / "byte_order_mark.py")
    (scan / "zero.py").symlink_to("/dev/zero")
    os.mkfifo(scan / "fifo.py")
    with open(scan / "huge.py", "wb") as huge:
        huge.truncate(100 << 30)
    shutil.copy(hostile("tool_is_a_number.toml"), tmp_path / "pyproject.toml")
    proc = run_cli(".", "--format", "json", cwd=scan, timeout=120)
    assert proc.returncode == 2, proc.stderr[-3000:]
    document = json.loads(proc.stdout)
    assert {f["path"]: f["error"] for f in document["files"]} == {
        "./byte_order_mark.py": None,
        "./fifo.py": "cannot read this file: not a regular file",
        "./huge.py": "cannot read this file: larger than 64 MiB",
        "./zero.py": "cannot read this file: not a regular file",
    }
    assert kernels_of(document)["doubled"] == ("ok", None)
    named = run_cli("zero.py", "byte_order_mark.py", "--format", "json", cwd=scan, timeout=120)
    assert {f["path"]: f["error"] for f in json.loads(named.stdout)["files"]} == {
        "zero.py": "cannot read this file: not a regular file",
        "byte_order_mark.py": None,
    }
    os.mkfifo(tmp_path / "config.toml")
    fifo = run_cli("byte_order_mark.py", "--config", str(tmp_path / "config.toml"), cwd=scan, timeout=60)
    assert (fifo.returncode, fifo.stderr) == (2, f"tl-inspect: error: {tmp_path / 'config.toml'}: not a regular file\n")


def test_a_file_that_kills_its_parent_or_its_group_fails_alone(tmp_path):
    """Defect 8, issue 20 class 9: a worker may not signal the zygote; the culprit is named, the files
    inspected beside it keep their results."""
    paths = [hostile("kills_its_parent.py"), hostile("kills_its_group.py"), hostile("byte_order_mark.py")]
    proc = run_cli(*paths, "--format", "json", "-j", "3")
    assert proc.returncode == 2
    document = json.loads(proc.stdout)
    errors = {os.path.basename(f["path"]): f["error"] for f in document["files"]}
    assert errors == {
        "kills_its_parent.py": "PermissionError: [Errno 1] Operation not permitted (while importing the module)",
        "kills_its_group.py": "worker crashed (SIGKILL) while importing the module",
        "byte_order_mark.py": None,
    }
    assert kernels_of(document)["doubled"] == ("ok", None)
    assert_one_line(proc.stderr)


def test_the_time_limit_holds_against_a_stopped_zygote_and_a_worker_out_of_its_group():
    """Issue 20, class 1: SIGSTOP to the zygote, its group, tl-inspect and every process is refused; a
    worker that joins the zygote's group and hangs is still killed at --timeout; the other files are kept."""
    paths = [hostile("stops_its_parent.py"), hostile("escapes_its_group.py"), hostile("byte_order_mark.py")]
    proc = run_cli(*paths, "--format", "json", "-j", "3", "--timeout", "20", timeout=240)
    assert proc.returncode == 2, proc.stderr[-3000:]
    document = json.loads(proc.stdout)
    errors = {os.path.basename(f["path"]): f["error"] for f in document["files"]}
    assert errors == {
        "stops_its_parent.py": "PermissionError: [Errno 1] Operation not permitted (while importing the module)",
        "escapes_its_group.py": "worker timed out after 20 s while importing the module",
        "byte_order_mark.py": None,
    }
    # the kernel bound before the refused signal is inspected, and so is the file beside them
    assert [k["status"] for k in document["kernels"] if k["name"] == "doubled"] == ["ok", "ok"]
    assert_one_line(proc.stderr)


def test_a_file_that_writes_into_its_result_file_costs_only_what_came_after():
    """Issue 20, class 9: the result file holds a pickle that would end the parent (`os._exit`) and garbage;
    nothing in it is called, the kernel before it and the file beside it are kept."""
    proc = run_cli(hostile("writes_into_its_result.py"), hostile("byte_order_mark.py"), "--format", "json")
    assert proc.returncode == 2, proc.stderr[-3000:]
    document = json.loads(proc.stdout)
    assert kernels_of(document) == {
        "<module>": ("error", "the file's code wrote into the worker's result file: what came after is lost"),
        "scaled[N=2048]": ("ok", None),
        "doubled": ("ok", None),
    }
    assert_one_line(proc.stderr)


def test_each_kernel_has_its_own_time_limit():
    """Issue 20, class 6: two kernels of 12 s each under --timeout 20; the one after them is not blamed."""
    proc = run_cli(hostile("slow_kernels_first.py"), "--format", "json", "--timeout", "20")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert kernels_of(json.loads(proc.stdout)) == {
        "scaled[N=2048]": ("ok", None),
        "scaled[N=3072]": ("ok", None),
        "scaled[N=4096]": ("ok", None),
    }


def test_broken_output_and_unprintable_exceptions_lose_no_kernel():
    """Issue 20, class 6: `sys.stdout = None`, fds 1 and 2 closed, an exception whose `__str__` raises (at
    import and in a factory), a syntax error in an imported helper: each is the one error it is."""
    paths = [
        hostile(name) for name in ("breaks_its_output.py", "unprintable_at_import.py", "imports_a_broken_helper.py")
    ]
    proc = run_cli(*paths, "--format", "json-lines")
    assert proc.returncode == 2, proc.stderr[-3000:]
    records = [json.loads(line) for line in proc.stdout.splitlines()]
    unprintable = "Unprintable: (its message could not be shown: RuntimeError in its __str__)"
    assert {
        (os.path.basename(r["file"]), r["kernel"], r["line"], r["error"]) for r in records if r["kind"] == "error"
    } == {
        ("breaks_its_output.py", "scaled[N=0]", 19, f"{unprintable} (while compiling)"),
        ("unprintable_at_import.py", "<module>", 19, f"{unprintable} (while importing the module)"),
        (
            "imports_a_broken_helper.py",
            "<module>",
            14,
            "SyntaxError in tests/data/hostile/broken_helper.py, line 3: invalid syntax (while importing the module)",
        ),
    }
    document = json.loads(run_cli(*paths, "--format", "json").stdout)
    assert {k["name"]: k["status"] for k in document["kernels"] if k["status"] == "ok"} == {
        "scaled[N=2048]": "ok",
        "scaled[N=4096]": "ok",
        "doubled": "ok",
    }
    assert [k["file"] for k in document["kernels"] if k["name"] == "doubled"] == paths[1:]
    assert_one_line(proc.stderr)


def test_what_a_worker_writes_is_bounded_and_removed_with_it():
    """Issue 20, class 4: a thread printing without end is stopped at the worker's disk limit."""
    proc = run_cli(hostile("prints_without_end.py"), hostile("byte_order_mark.py"), "--format", "json")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert kernels_of(json.loads(proc.stdout)) == {
        "<module>": (
            "error",
            "worker was stopped: it wrote more than 1024 MiB (or 100000 files) into its "
            "temporary folder while importing the module",
        ),
        "doubled": ("ok", None),
    }
    assert_one_line(proc.stderr)


def test_a_full_temporary_disk_is_named_and_costs_only_the_file_that_filled_it(tmp_path):
    """Issue 20, class 4: TMPDIR on a 64 MiB tmpfs that the first file fills, the cache on an 8 KiB one that no
    entry fits in (both in a user and mount namespace): no partial cache file is left."""
    tiny, cache = tmp_path / "tiny", tmp_path / "cache-on-tmpfs"
    tiny.mkdir()
    cache.mkdir()
    if subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode != 0:
        pytest.skip("no unprivileged user namespaces to mount a small tmpfs in")
    script = (
        f"mount -t tmpfs -o size=64m none {tiny} && mount -t tmpfs -o size=8k none {cache} && "
        f"TMPDIR={tiny} TL_INSPECT_CACHE_DIR={cache} {sys.executable} -m tl_inspect "
        f"{hostile('fills_the_disk.py')} {hostile('byte_order_mark.py')} -j 1 --format json; "
        f"status=$?; ls -A {cache}; exit $status"
    )
    proc = subprocess.run(["unshare", "-Urm", "sh", "-c", script], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    report, left_in_cache = proc.stdout.rsplit("}", 1)
    assert left_in_cache.strip() == ""
    document = json.loads(report + "}")
    (error,) = [f["error"] for f in document["files"] if f["error"]]
    assert error.startswith(f"worker could not write its files in {tiny}/tl-inspect-")
    assert error.endswith(": the disk is full while importing the module")
    assert kernels_of(document)["doubled"] == ("ok", None)


def test_a_garbled_cache_entry_is_recomputed_and_a_relative_cache_home_is_ignored(tmp_path, private_cache):
    """Issue 20, class 7 and 4: a cache entry with flipped bytes, then one cut short; XDG_CACHE_HOME=relative."""

    def run(**env):
        proc = run_cli(hostile("byte_order_mark.py"), "--format", "json", env={**os.environ, **env})
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return json.loads(proc.stdout)["files"][0]["cached"]

    assert run() is False
    (entry,) = (tmp_path / "cache").iterdir()
    data = bytearray(entry.read_bytes())
    data[len(data) // 2] ^= 0xFF
    entry.write_bytes(bytes(data))
    assert run() is False
    entry.write_bytes(entry.read_bytes()[:100])
    assert run() is False
    assert run() is True
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TL_INSPECT_CACHE_DIR"}
    proc = run_cli(
        hostile("byte_order_mark.py"), env={**env, "XDG_CACHE_HOME": "relative", "HOME": str(tmp_path)}, cwd=work
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert not (work / "relative").exists() and list((tmp_path / ".cache" / "tl-inspect").iterdir())


def test_valid_code_that_needs_the_main_thread_a_package_or_forks_is_inspected():
    """Issue 20, class 5: `signal.signal` and `asyncio.get_event_loop()` at import, `from .sizes import SIZE`
    in a package, an unguarded `os.fork()` at import (its kernel once, not twice)."""
    paths = [
        hostile("uses_the_main_thread.py"),
        hostile(os.path.join("package", "relative_import.py")),
        hostile("forks_at_import.py"),
    ]
    proc = run_cli(*paths, "--format", "json")
    assert proc.returncode == 0, proc.stderr[-3000:]
    kernels = json.loads(proc.stdout)["kernels"]
    assert [(k["file"], k["name"], k["status"]) for k in kernels] == [(path, "doubled", "ok") for path in paths]


def test_odd_cases_and_options_are_bounded_and_said_in_one_line():
    """Issue 20, class 7: a repeated sweep value, a 17 MB malformed TL_INSPECT_CASES entry, and `-j 1000` on one
    file holding 300 MiB (the memory is shared by the workers that run)."""
    paths = [hostile("odd_cases.py"), hostile("huge_malformed_cases.py"), hostile("holds_300_mib.py")]
    proc = run_cli(*paths, "--format", "json", "-j", "1000")
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert kernels_of(json.loads(proc.stdout)) == {
        "scaled[N=2048]": ("ok", None),
        "scaled[N=4096]": ("ok", None),
        "doubled": ("ok", None),
        "<module>": (
            "error",
            "TL_INSPECT_CASES entry 'scaled': expected a list of keyword-argument dicts, or one "
            "dict with 'sweep': {NAME: [values]}, got 'xxxxxxxxxxxx...xxxxxxxxxxxxx'",
        ),
    }


@pytest.mark.parametrize(
    "args,message",
    [
        (
            ["--sweep", "N=" + ",".join(str(1024 * i) for i in range(1, 2001))],
            "tl-inspect: error: --sweep: 2000 cases; at most 1024 are inspected (sweep fewer values)\n",
        ),
        (
            ["--diff-against", ""],
            "tl-inspect: error: --diff-against expects a git revision such as origin/main, got an empty string\n",
        ),
    ],
)
def test_a_sweep_too_large_or_an_empty_revision_stops_the_run_at_once(args, message):
    """Issue 20, class 7: a 2000-case sweep is refused before any case is built; `--diff-against ""` is an error."""
    proc = run_cli(hostile("odd_cases.py") + "::scaled", *args, timeout=60)
    assert (proc.returncode, proc.stderr) == (2, message)


def test_the_current_folder_and_os_chdir_do_not_leak_into_the_worker(tmp_path):
    """Defect 8: a copy.py in the current folder, and a file that changes folder at import."""
    (tmp_path / "copy.py").write_text("raise ImportError('the standard library is shadowed')\n")
    shutil.copy(hostile("changes_directory.py"), tmp_path / "changes_directory.py")
    # `-P` as the installed `tl-inspect` script runs: the current folder is not on the parent's path
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "tl_inspect", "changes_directory.py", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    findings = [f for k in json.loads(proc.stdout)["kernels"] for f in k["findings"]]
    assert {(f["file"], f["slug"]) for f in findings} == {("changes_directory.py", "lane-dependent-predicate")}


@pytest.mark.parametrize(
    "args,message",
    [
        (["-o", "/proc/version"], "tl-inspect: error: /proc/version: cannot write to this file:"),
        (["-o", HOSTILE], f"tl-inspect: error: {HOSTILE}: cannot write to this file: Is a directory"),
        (["--html", hostile("long_sum.py")], f"tl-inspect: error: --html {hostile('long_sum.py')}: this is a file"),
        (["--dump", hostile("long_sum.py")], f"tl-inspect: error: --dump {hostile('long_sum.py')}: this is a file"),
        (["--baseline", hostile("binary_baseline.json")], "not a tl-inspect baseline: not UTF-8 text (byte 2)"),
        (["--baseline", hostile("mistyped_baseline.json")], "malformed baseline entry 1: count = '2'"),
        (["--config", hostile("latin1_pyproject.toml")], "invalid TOML: not UTF-8 text"),
        (["--timeout", "nan"], "tl-inspect: error: --timeout: expected a number of seconds above 0, got nan"),
        (["-o", hostile("long_sum.py")], f"tl-inspect: error: -o {hostile('long_sum.py')}: this is a Python file;"),
        (["--write-baseline", os.path.join(ROOT, "tests", "data", "sleeps.py")], "sleeps.py: this is a Python file;"),
        (["--baseline", "/dev/zero"], "tl-inspect: error: /dev/zero: cannot read the baseline: not a regular file"),
        (["--config", "/dev/zero"], "tl-inspect: error: /dev/zero: not a regular file"),
        (["--config", hostile("deeply_nested.toml")], "deeply_nested.toml: invalid TOML: nested too deeply"),
    ],
)
def test_bad_outputs_and_options_stop_the_run_before_anything_compiles(args, message):
    """Defects 9 and 10: one line and exit 2, before the file (which sleeps 60 s at import) is compiled."""
    proc = run_cli(os.path.join(ROOT, "tests", "data", "sleeps.py"), *args, timeout=30)
    assert proc.returncode == 2
    assert message in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr[-3000:]


def test_a_full_disk_is_one_line_and_errors_reach_the_terminal(tmp_path):
    """Defects 9 and 10: `-o /dev/full`; json-lines and `-o FILE` still show a broken file."""
    broken, fine = os.path.join(ROOT, "tests", "data", "bad_syntax.py"), hostile("byte_order_mark.py")
    full = run_cli(broken, fine, "-o", "/dev/full")
    assert full.returncode == 2
    assert (
        full.stderr.splitlines()[0] == "tl-inspect: error: /dev/full: cannot write the report: No space left on device"
    )
    assert_one_line(full.stderr)
    lines = run_cli(broken, fine, "--format", "json-lines")
    assert lines.returncode == 2
    assert json.loads(lines.stdout.splitlines()[0]) == {
        "kind": "error",
        "file": broken,
        "kernel": "<module>",
        "line": 3,
        "error": "SyntaxError: invalid syntax (while importing the module)",
    }
    to_file = run_cli(broken, fine, "--format", "json", "-o", str(tmp_path / "report.json"))
    assert to_file.returncode == 2
    assert to_file.stderr == f"tl-inspect: error: {broken}: SyntaxError: invalid syntax (while importing the module)\n"


def test_output_printed_while_building_is_capped_and_kept_out_of_the_layouts(tmp_path, private_cache):
    """Defect 11: 50 MB printed by the factory; the page, the cache entry and the layout text stay small."""
    proc = run_cli(hostile("prints_a_lot.py"), "--format", "json", "--html", str(tmp_path / "html"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    sizes = [p.stat().st_size for p in (tmp_path / "html").rglob("*.html")]
    sizes += [p.stat().st_size for p in (tmp_path / "cache").iterdir()]
    assert len(sizes) > 2 and max(sizes) < 4 << 20, sizes
    results = inspect_files([hostile("prints_a_lot.py")])
    kernel = results[hostile("prints_a_lot.py")].kernels[0]
    assert "xxxx" not in kernel.layout_text
    assert kernel.warnings[-1].endswith("[tl-inspect: 25165824 more bytes of output not kept]")


def test_names_and_terminals_cannot_garble_the_output(tmp_path):
    """Issue 20, class 8: ESC, bidi and newline in case labels and file names, a 300-character label with --dump
    and --html, an ASCII-only terminal with COLUMNS=0, a latin-1 source, a form feed and U+2028 before a
    finding, and a closed standard output."""
    named = tmp_path / "esc\x1b[31m\u202ename\n.py"
    shutil.copy(hostile("byte_order_mark.py"), named)
    paths = [hostile("odd_names.py"), hostile("latin1_source.py"), str(named)]
    env = {**os.environ, "PYTHONIOENCODING": "ascii", "COLUMNS": "0"}
    full = run_cli(*paths, "--dump", str(tmp_path / "dump"), "--html", str(tmp_path / "html"), env=env)
    assert full.returncode == 1, full.stderr[-3000:]
    assert "\x1b" not in full.stdout and "\u202e" not in full.stdout and "Traceback" not in full.stderr
    shown = full.stdout.splitlines()
    assert "padded[N=2047,tag=\\x1b[2J\\u202e\\x0a\\u2192]" in full.stdout
    assert any(
        line.endswith("16 |                 B[bx * 1024 + i] = A[bx * 1024 + i] + 1  # the finding") for line in shown
    )
    assert any(
        line.endswith("14 |                 B[bx * 1024 + i] = A[bx * 1024 + i] + 1  # caf\\xe9 cr\\xe8me")
        for line in shown
    )
    assert max(len(p.name) for p in (tmp_path / "dump").rglob("*")) <= 96
    assert len(list((tmp_path / "html").glob("k_*.html"))) == 4
    concise = run_cli(*paths, "--format", "concise", env=env)
    assert concise.returncode == 1, concise.stderr[-3000:]
    for line in concise.stdout.splitlines()[:-1]:
        assert line.startswith((paths[0], paths[1])), line
    closed = subprocess.run(
        [sys.executable, "-m", "tl_inspect", hostile("byte_order_mark.py")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        timeout=60,
        preexec_fn=lambda: os.close(1),
    )
    assert (closed.returncode, closed.stderr) == (
        2,
        "tl-inspect: error: standard output is closed: give -o FILE for the report\n",
    )


def test_escape_sequences_sarif_uris_and_dump_folders(tmp_path):
    """Defect 13: a user's error text is escaped, SARIF URIs are percent-encoded, --dump keeps same-named kernels."""
    shown = run_cli(hostile("escape_sequences.py"), "--format", "full")
    assert shown.returncode == 2
    assert "\x1b" not in shown.stdout + shown.stderr and "\\x1b[2J\\x1b[31mgotcha\\x07" in shown.stdout
    same = os.path.join(HOSTILE, "same_name")
    sarif = run_cli(same, "--format", "sarif", "--dump", str(tmp_path), cwd=same)
    assert sarif.returncode == 1, sarif.stderr[-3000:]
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(sarif.stdout)["runs"][0]["results"]
    }
    # relative to the repository (or to the current folder outside one)
    assert sorted(uri.split("same_name/")[-1] for uri in uris) == [
        "needs%20percent%20%23encoding.py",
        "other/needs%20percent%20%23encoding.py",
    ]
    dumped = tmp_path / "needs_percent__encoding"
    assert sorted(p.name for p in dumped.iterdir()) == ["doubled", "doubled-2"]
    assert (dumped / "doubled" / "kernel.cu").read_text() != (dumped / "doubled-2" / "kernel.cu").read_text()
