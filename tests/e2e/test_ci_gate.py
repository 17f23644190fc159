"""The CI gate as a CI job meets it, with real kernels compiled by the real inspector: a run that inspected
nothing fails and says why in every format, shards cover a library and merge back, the documented
workflow files validate against their schemas and name only flags that exist, and the documented
pre-commit configuration gates real commits in a real git repository."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import jsonschema
import pytest
import yaml
from conftest import ROOT
from gitrepo import GIT_ENV, Repo

from tl_inspect.cli.parser import build_parser

SARIF_SCHEMA = os.path.join(ROOT, "tests", "data", "sarif-schema-2.1.0.json")
CI_DOC = os.path.join(ROOT, "docs", "ci.md")

# a factory whose only call reads its length from a file: nothing to infer, so nothing is compiled
UNINSPECTED = """import tilelang
import tilelang.language as T


def shift(N, block=512):
    @T.prim_func
    def shift_main(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1

    return shift_main


def main():
    import torch

    shift(torch.load("input.pt").shape[0])
"""
CASES_LINE = 'TL_INSPECT_CASES = {"shift": [{"N": ...}]}'
GATE_LINE = f"tl-inspect: error: no kernel was inspected: gemm.py has factories that need arguments: add {CASES_LINE}"

KERNEL = """import tilelang
import tilelang.language as T


def ew_add(N, block=1024):
    @T.prim_func
    def ew_add_kernel(A: T.Tensor((N,), T.float16), B: T.Tensor((N,), T.float16), C: T.Tensor((N,), T.float16)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]

    return ew_add_kernel


add = ew_add({n})
"""
HELPER = "import tilelang.language as T\n\nBLOCK = 1024\n"


def tl_inspect(cwd, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src")}
    return subprocess.run(
        [sys.executable, "-m", "tl_inspect", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def sarif_schema() -> dict:
    with open(SARIF_SCHEMA, encoding="utf-8") as f:
        return json.load(f)


# ---------------------------------------------------------------- a gate that inspected nothing


def test_uninspected_factories_fail_the_run_and_show_in_every_format(tmp_path):
    (tmp_path / "gemm.py").write_text(UNINSPECTED)
    outputs = {}
    for fmt in ("full", "concise", "github", "sarif", "gitlab", "junit", "json"):
        proc = tl_inspect(tmp_path, "gemm.py", "--format", fmt)
        assert proc.returncode == 2, (fmt, proc.stdout, proc.stderr)
        assert proc.stderr.splitlines() == [GATE_LINE], (fmt, proc.stderr)
        outputs[fmt] = proc.stdout
    assert f"gemm.py: add {CASES_LINE}" in outputs["full"]
    assert f"gemm.py:1:1: note: no call of its factories could be inferred; add {CASES_LINE}\n" in outputs["concise"]
    assert (
        "::notice file=gemm.py,line=1,title=tl-inspect%3A factories without a case::no call of its factories "
        f"could be inferred; add {CASES_LINE}\n"
    ) in outputs["github"]
    sarif = json.loads(outputs["sarif"])
    jsonschema.Draft7Validator(sarif_schema()).validate(sarif)
    invocation = sarif["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is False
    [notification] = invocation["toolExecutionNotifications"]
    assert notification["level"] == "warning" and CASES_LINE in notification["message"]["text"]
    assert notification["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "gemm.py"
    [issue] = json.loads(outputs["gitlab"])
    assert issue["check_name"] == "tl-inspect/factory-without-case" and CASES_LINE in issue["description"]
    skipped = ET.fromstring(outputs["junit"]).find("testsuite/testcase/skipped")
    assert skipped is not None and CASES_LINE in skipped.get("message")
    assert json.loads(outputs["json"])["summary"]["files_needing_cases"] == [{"path": "gemm.py", "add": CASES_LINE}]


def test_a_helper_module_fails_a_scan_but_not_the_pre_commit_hook(tmp_path):
    (tmp_path / "blocks.py").write_text(HELPER)
    scan = tl_inspect(tmp_path, "blocks.py", "--format", "concise")
    assert scan.returncode == 2
    assert scan.stderr.splitlines() == [
        "tl-inspect: error: no kernel was inspected: blocks.py defines no kernel and no factory"
    ]
    hook = tl_inspect(tmp_path, "--only-tilelang", "blocks.py", "--format", "concise")
    assert hook.returncode == 0, hook.stderr


def test_one_inspected_kernel_passes_the_gate_and_the_uninspected_factory_is_still_shown(tmp_path):
    (tmp_path / "gemm.py").write_text(UNINSPECTED)
    (tmp_path / "add.py").write_text(KERNEL.format(n=4096))
    proc = tl_inspect(tmp_path, "gemm.py", "add.py", "--format", "sarif")
    assert proc.returncode == 0, proc.stderr
    invocation = json.loads(proc.stdout)["runs"][0]["invocations"][0]
    assert invocation["executionSuccessful"] is True
    assert [n["level"] for n in invocation["toolExecutionNotifications"]] == ["warning"]


# ---------------------------------------------------------------- shards and merge


def test_shards_cover_the_library_and_merge_into_the_single_run(tmp_path):
    names = ["a.py", "b.py", "c.py"]
    for name, n in zip(names, (2047, 4096, 4095)):
        (tmp_path / name).write_text(KERNEL.format(n=n))
    whole = tl_inspect(tmp_path, ".", "--format", "json")
    assert whole.returncode == 1, whole.stderr
    shards = {}
    for k in (1, 2):
        for fmt in ("json", "sarif"):
            proc = tl_inspect(tmp_path, ".", "--shard", f"{k}/2", "--format", fmt, "-o", f"shard{k}.{fmt}")
            assert proc.returncode == {1: 1, 2: 0}[k], proc.stderr  # a.py and c.py have the odd lengths
        shards[k] = json.loads((tmp_path / f"shard{k}.json").read_text())
    files = [[os.path.basename(f["path"]) for f in shards[k]["files"]] for k in (1, 2)]
    assert files == [["a.py", "c.py"], ["b.py"]]

    merged = tl_inspect(tmp_path, "merge", "shard1.json", "shard2.json")
    assert merged.returncode == 0, merged.stderr
    document, expected = json.loads(merged.stdout), json.loads(whole.stdout)
    assert [(k["file"], k["name"], k["findings"]) for k in document["kernels"]] == [
        (k["file"], k["name"], k["findings"]) for k in expected["kernels"]
    ]
    assert document["summary"] == expected["summary"]

    proc = tl_inspect(tmp_path, "merge", "shard1.sarif", "shard2.sarif", "-o", "merged.sarif")
    assert proc.returncode == 0, proc.stderr
    sarif = json.loads((tmp_path / "merged.sarif").read_text())
    jsonschema.Draft7Validator(sarif_schema()).validate(sarif)
    run = sarif["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == sorted({r["id"] for r in rules})
    assert sorted(
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in run["results"]
    ) == sorted((f["rule"], os.path.basename(f["file"])) for k in expected["kernels"] for f in k["findings"])
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]

    empty = tl_inspect(tmp_path, "a.py", "--shard", "2/2", "--format", "json")
    assert empty.returncode == 0 and json.loads(empty.stdout)["kernels"] == []
    assert empty.stderr == "tl-inspect: shard 2/2 has no file (1 file in all)\n"


@pytest.mark.parametrize(
    "args, line",
    [
        (["a.py", "--shard", "3/2"], "tl-inspect: error: --shard expects K/N with 1 <= K <= N, e.g. 2/4, got '3/2'"),
        (["merge", "a.py"], "tl-inspect: error: a.py: not JSON: Expecting value: line 1 column 1 (char 0)"),
        (
            ["merge", "other.json"],
            "tl-inspect: error: other.json: not a report of tl-inspect --format json or --format sarif",
        ),
        (["merge", "missing.json"], "tl-inspect: error: missing.json: cannot read: No such file or directory"),
    ],
)
def test_bad_shard_and_merge_input_is_one_line(tmp_path, args, line):
    (tmp_path / "a.py").write_text(KERNEL.format(n=4096))
    (tmp_path / "other.json").write_text('{"runs": []}')
    proc = tl_inspect(tmp_path, *args)
    assert proc.returncode == 2 and proc.stderr.splitlines() == [line]


# ---------------------------------------------------------------- the documented CI files


def documented(header: str) -> str:
    """The fenced block of docs/ci.md whose first line is `# HEADER`."""
    text = open(CI_DOC, encoding="utf-8").read()
    for block in re.findall(r"^```\w*\n(.*?)^```$", text, re.S | re.M):
        if block.startswith(f"# {header}\n"):
            return block
    raise AssertionError(f"docs/ci.md has no block headed # {header}")


@pytest.mark.parametrize(
    "header, schema",
    [
        (".github/workflows/tl-inspect.yml", "vendor.github-workflows"),
        (".github/workflows/tl-inspect-sharded.yml", "vendor.github-workflows"),
        (".gitlab-ci.yml", "vendor.gitlab-ci"),
    ],
)
def test_documented_workflows_validate_and_name_real_flags(tmp_path, header, schema):
    path = tmp_path / os.path.basename(header)
    path.write_text(documented(header))
    check = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, str(path)],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stdout + check.stderr
    commands = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("run", "script") or isinstance(value, (dict, list)):
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, str) and node.lstrip().startswith("tl-inspect "):
            commands.append(node)

    walk(yaml.safe_load(documented(header)))
    assert commands, "the workflow runs tl-inspect"
    for command in commands:
        # GitHub fills in its expressions before the shell runs the line
        words = shlex.split(
            re.sub(r"\$\{\{ *github.base_ref *\}\}", "main", re.sub(r"\$\{\{ *matrix.shard *\}\}", "1", command))
        )
        assert "${{" not in " ".join(words), command
        if words[1] == "merge":
            assert words[2:] == ["tl-inspect-*.sarif", "-o", "tl-inspect.sarif"]
            continue
        options = build_parser().parse_args(words[1:])
        assert options.paths == ["kernels/"]
    assert "pip install -e . tl-inspect" not in documented(header)


def test_documented_installs_pin_the_release_tag_and_name_no_placeholder():
    try:
        import tomllib
    except ImportError:  # Python 3.10
        import tomli as tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        tag = "v" + tomllib.load(f)["project"]["version"]
    text = open(CI_DOC, encoding="utf-8").read()
    assert "YOUR-" not in text
    # every install of tl-inspect and the pre-commit pin name the tag the lead creates for this version
    installs = re.findall(r'"git\+\$TL_INSPECT_GIT@([^"]+)"', text)
    assert len(installs) == 4 and set(installs) == {tag}
    assert yaml.safe_load(documented(".pre-commit-config.yaml"))["repos"][0]["rev"] == tag


def test_documented_pre_commit_config_gates_real_commits(tmp_path):
    # tl-inspect's repository as pre-commit sees it: the hook manifest, committed and tagged
    hooks = Repo(tmp_path / "tl-inspect")
    shutil.copy(os.path.join(ROOT, ".pre-commit-hooks.yaml"), hooks.path)
    hooks.commit("hook manifest")
    hooks.git("tag", "v0.1.0")
    config = yaml.safe_load(documented(".pre-commit-config.yaml"))
    assert config["repos"][0]["rev"] == "v0.1.0"
    config["repos"][0]["repo"] = hooks.path
    # the hook runs the `tl-inspect` on PATH (language: system): this checkout's
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "tl-inspect").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m tl_inspect "$@"\n')
    (bin_dir / "tl-inspect").chmod(0o755)
    env = {
        **os.environ,
        **GIT_ENV,
        "PYTHONPATH": os.path.join(ROOT, "src"),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
    }

    project = Repo(tmp_path / "project")
    project.write(".pre-commit-config.yaml", yaml.safe_dump(config))
    project.write("clean.py", KERNEL.format(n=4096))
    baseline = tl_inspect(project.path, "clean.py", "--write-baseline", ".tl-inspect-baseline.json")
    assert baseline.returncode == 0, baseline.stderr
    project.commit("pre-commit configuration, an empty baseline")
    subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=project.path, env=env, check=True, capture_output=True
    )

    def commit(name: str, text: str) -> subprocess.CompletedProcess:
        project.write(name, text)
        subprocess.run(["git", "add", name], cwd=project.path, env=env, check=True)
        return subprocess.run(
            ["git", "commit", "-q", "-m", f"add {name}"], cwd=project.path, env=env, capture_output=True, text=True
        )

    refused = commit("bad.py", KERNEL.format(n=2047))
    assert refused.returncode != 0, "a kernel with a finding must not be committed"
    hook_output = refused.stdout + refused.stderr
    assert "bad.py:10:" in hook_output and "lane-dependent-predicate" in hook_output, hook_output
    project.git("rm", "-q", "--cached", "bad.py")
    assert commit("blocks.py", HELPER).returncode == 0, "a helper module passes the hook"
    accepted = commit("good.py", KERNEL.format(n=4096))
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert project.git("log", "--format=%s").split("\n")[:2] == ["add good.py", "add blocks.py"]
