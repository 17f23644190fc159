"""The cache key follows the code that makes a result: the inspector and the analysis, not the rules."""

from __future__ import annotations

import shutil

from tl_inspect.inspector.processes import cache


def test_code_fingerprint_changes_with_the_analysis_not_with_a_rule(tmp_path, monkeypatch):
    package = tmp_path / "tl_inspect"
    shutil.copytree(cache._PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE_DIR", str(package))

    def fingerprint() -> bytes:
        cache._code_fingerprint.cache_clear()
        return cache._code_fingerprint()

    try:
        before = fingerprint()
        for edited in ("analysis/verdicts.py", "tir/indexing.py", "inspector/lowering/compile.py", "gpu/arch.py"):
            with open(package / edited, "a") as f:
                f.write("\n# edited\n")
            after = fingerprint()
            assert after != before, edited
            before = after
        (package / "rules" / "a_new_rule.py").write_text("# a rule runs on results, it never makes one\n")
        with open(package / "reports" / "__init__.py", "a") as f:
            f.write("\n# edited\n")
        assert fingerprint() == before
    finally:
        cache._code_fingerprint.cache_clear()


def test_clean_removes_the_results_and_keeps_the_cost_tables(tmp_path):
    import json
    import os
    import subprocess
    import sys

    from conftest import ROOT

    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), "TL_INSPECT_CACHE_DIR": str(tmp_path / "cache")}

    def tl_inspect(*args):
        return subprocess.run(
            [sys.executable, "-m", "tl_inspect", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
        )

    kernel = "src/tl_inspect/rules/missing_clear/bad_row_sum_tiles.py"
    # a table `tl-inspect calibrate` fitted (here: a copy of the shipped one) is a measurement, not a result
    (tmp_path / "cache" / "cost").mkdir(parents=True)
    table = tmp_path / "cache" / "cost" / "H200.json"
    shutil.copyfile(os.path.join(cache._PACKAGE_DIR, "gpu", "cost_tables", "H200.json"), table)

    def cached() -> bool:
        return json.loads(tl_inspect(kernel, "--format", "json").stdout)["files"][0]["cached"]

    assert not cached() and cached()
    entries = [name for name in os.listdir(tmp_path / "cache") if name.endswith(".pickle")]
    assert len(entries) == 1
    size = os.path.getsize(tmp_path / "cache" / entries[0])
    done = tl_inspect("clean")
    assert done.returncode == 0
    assert done.stdout == f"tl-inspect: removed 1 cached result ({size / 1024:.1f} KiB) from {tmp_path / 'cache'}\n"
    assert table.exists() and not cached()


KERNEL = "src/tl_inspect/rules/missing_clear/bad_row_sum_tiles.py"


def _cli(tmp_path):
    import os

    from conftest import run_cli

    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path / "cache")}
    return lambda *args: run_cli(*args, "--format", "json", cwd=tmp_path, env=env)


def _entries(tmp_path) -> list:
    return sorted((tmp_path / "cache").glob("*.pickle"))


def test_one_entry_per_file_however_its_path_is_spelt(tmp_path):
    import json
    import os

    from conftest import ROOT

    shutil.copyfile(os.path.join(ROOT, KERNEL), tmp_path / "row_sum.py")
    (tmp_path / "link.py").symlink_to(tmp_path / "row_sum.py")
    tl_inspect = _cli(tmp_path)
    spellings = ["row_sum.py", "./row_sum.py", str(tmp_path / "row_sum.py"), "link.py"]
    for number, spelling in enumerate(spellings):
        proc = tl_inspect(spelling)
        assert proc.returncode == 1, proc.stderr  # the missing-clear finding
        document = json.loads(proc.stdout)
        assert document["files"][0]["cached"] is (number > 0), spelling
        # a cached result reads as this run spelt the path, not as the run that stored it
        assert document["files"][0]["path"] == spelling
        assert {f["file"] for k in document["kernels"] for f in k["findings"]} == {spelling}
    assert len(_entries(tmp_path)) == 1


def test_the_least_recently_used_entries_go_once_the_cache_outgrows_its_bound(tmp_path):
    import json
    import os
    import time

    from conftest import ROOT

    (tmp_path / "pyproject.toml").write_text("[tool.tl-inspect]\ncache-max-mb = 1\n")
    for name in ("first.py", "second.py"):
        shutil.copyfile(os.path.join(ROOT, KERNEL), tmp_path / name)
    tl_inspect = _cli(tmp_path)
    tl_inspect("first.py")
    [first] = _entries(tmp_path)
    now = time.time()
    os.utime(first, (now - 3000, now - 3000))
    # two entries of other files, sized so that the bound holds once the older one is gone
    limit, size = 1 << 20, first.stat().st_size
    older, newer = tmp_path / "cache" / "older.pickle", tmp_path / "cache" / "newer.pickle"
    for filler, age in ((older, 2000), (newer, 500)):
        filler.write_bytes(b"\0" * (3 * (limit - 2 * size) // 4))
        os.utime(filler, (now - age, now - age))
    # a hit is a use: first.py's entry becomes the most recently used of the three
    assert json.loads(tl_inspect("first.py").stdout)["files"][0]["cached"]
    assert older.exists()  # a run that stores nothing evicts nothing
    tl_inspect("second.py")
    remaining = _entries(tmp_path)
    assert older not in remaining and newer in remaining and first in remaining and len(remaining) == 3
    assert sum(path.stat().st_size for path in remaining) <= limit
