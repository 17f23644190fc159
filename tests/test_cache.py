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
