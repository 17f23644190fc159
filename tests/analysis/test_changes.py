"""`--diff-against` plumbing: changed files and lines from real git repositories."""

from __future__ import annotations

import os

import pytest
from gitrepo import Repo

from tl_inspect.lint.changes import ChangesError, changes_since, hunk_lines

DIFF = """diff --git a/k.py b/k.py
index 1..2 100644
--- a/k.py
+++ b/k.py
@@ -3,0 +4,2 @@ def f():
+    a = 1
+    b = 2
@@ -10 +12 @@ def g():
-    x = 1
+    x = 2
@@ -20,3 +21,0 @@ def h():
-    gone
diff --git "a/we\\tird.py" "b/we\\tird.py"
--- "a/we\\tird.py"
+++ "b/we\\tird.py"
@@ -1 +1 @@
-a
+b
diff --git a/deleted.py b/deleted.py
--- a/deleted.py
+++ /dev/null
@@ -1 +0,0 @@
-a
"""


def test_hunk_lines_reads_added_and_changed_lines_only():
    assert hunk_lines(DIFF) == {"k.py": {4, 5, 12}, "we\tird.py": {1}}


def test_changes_on_a_two_commit_history(tmp_path):
    repo = Repo(tmp_path)
    repo.write("a.py", "one\ntwo\nthree\n")
    repo.write("b.py", "b\n")
    repo.write("gone.py", "g\n")
    repo.commit("first")
    repo.write("a.py", "zero\none\ntwo\nTHREE\n")
    os.remove(os.path.join(repo.path, "gone.py"))
    repo.commit("second")
    repo.write("new.py", "untracked\n")

    changes = changes_since("HEAD~1", repo.path)
    a = os.path.join(repo.path, "a.py")
    assert changes.touches(a) and not changes.touches(os.path.join(repo.path, "b.py"))
    assert not changes.touches(os.path.join(repo.path, "gone.py"))
    assert changes.lines[os.path.realpath(a)] == frozenset({1, 4})
    assert changes.changed(a, 4, 4) and changes.changed(a, 2, 4) and not changes.changed(a, 2, 3)
    # an untracked file is new as a whole
    assert changes.changed(os.path.join(repo.path, "new.py"), 1, 1)


def test_changes_start_at_the_merge_base(tmp_path):
    repo = Repo(tmp_path)
    repo.write("a.py", "a\n")
    repo.commit("base")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.py", "f\n")
    repo.commit("feature work")
    repo.git("checkout", "-q", "main")
    repo.write("main_only.py", "m\n")
    repo.commit("main moves on")
    repo.git("checkout", "-q", "feature")
    changes = changes_since("main", repo.path)
    assert set(changes.lines) == {os.path.realpath(os.path.join(repo.path, "feature.py"))}


def test_git_errors_are_one_line(tmp_path):
    with pytest.raises(ChangesError, match="^--diff-against needs a git repository"):
        changes_since("HEAD", str(tmp_path))
    repo = Repo(tmp_path / "r")
    repo.write("a.py", "a\n")
    repo.commit("first")
    with pytest.raises(ChangesError, match=r"^--diff-against: unknown revision 'no-such-branch@\{1\}'$"):
        changes_since("no-such-branch@{1}", repo.path)
