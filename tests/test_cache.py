"""The cache key follows the code that makes a result: the inspector and the analysis, not the rules."""

from __future__ import annotations

import shutil

from tl_inspect.inspector import cache


def test_code_fingerprint_changes_with_the_analysis_not_with_a_rule(tmp_path, monkeypatch):
    package = tmp_path / "tl_inspect"
    shutil.copytree(cache._PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "_PACKAGE_DIR", str(package))

    def fingerprint() -> bytes:
        cache._code_fingerprint.cache_clear()
        return cache._code_fingerprint()

    try:
        before = fingerprint()
        for edited in ("analysis/verdicts.py", "indexing.py", "inspector/lowering.py"):
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
        return subprocess.run([sys.executable, "-m", "tl_inspect", *args], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=600)

    kernel = "src/tl_inspect/rules/missing_clear/bad_row_sum_tiles.py"
    # a table `tl-inspect calibrate` fitted (here: a copy of the shipped one) is a measurement, not a result
    (tmp_path / "cache" / "cost").mkdir(parents=True)
    table = tmp_path / "cache" / "cost" / "H200.json"
    shutil.copyfile(os.path.join(cache._PACKAGE_DIR, "analysis", "cost_tables", "H200.json"), table)

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
