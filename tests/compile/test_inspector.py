"""The inspector with the real tilelang: discovery, line attribution, artefacts, isolation, errors."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, ROOT, kernel_named, run_cli

from tl_inspect.tir import nodes as ir

DISCOVERY = os.path.join(FIXTURES, "discovery")
DATA = os.path.join(ROOT, "tests", "data")
NORMS = os.path.join(FIXTURES, "inspector", "norms.py")


def line_of(path: str, text: str) -> int:
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if text in line:
                return number
    raise AssertionError(f"{text!r} not in {path}")


def discovery_file(name: str) -> str:
    return os.path.join(DISCOVERY, name)


@pytest.fixture(scope="module")
def discovered(inspected):
    paths = sorted(os.path.join(DISCOVERY, f) for f in os.listdir(DISCOVERY) if f.endswith(".py"))
    return inspected(paths)


@pytest.mark.parametrize(
    "file,expected",
    [
        (
            "prim_funcs.py",
            [("scale_4096", "def scale_4096("), ("add_2048", "def add_kernel("), ("add_2047", "def add_kernel(")],
        ),
        ("jit_kernels.py", [("copy_4096", "def copy_main("), ("negate_8192", "def negate_main(")]),
        (
            "cases.py",
            [
                ("row_scale[M=256,N=4096]", "def row_scale_main("),
                ("row_scale[M=64,N=1000]", "def row_scale_main("),
                ("jit_row_copy[M=128,N=2048]", "def jit_row_copy_main("),
            ],
        ),
        ("eager_const.py", [("eager_scale[M=64,N=1024]", "def eager_scale(")]),
        ("autotuned.py", [("tuned_add[N=8192]", "def tuned_add_main(")]),
        ("raises_after_kernel.py", [("double_1024", "def double_1024(")]),
    ],
)
def test_every_discovery_form_is_found_with_name_and_def_line(discovered, file, expected):
    path = discovery_file(file)
    result = discovered[path]
    assert [(k.name, k.line) for k in result.kernels] == [(name, line_of(path, text)) for name, text in expected]
    assert all(k.status == "ok" and k.source for k in result.kernels), [k.error for k in result.kernels]


def test_module_that_raises_keeps_the_kernels_defined_before_and_reports_the_error(discovered):
    path = discovery_file("raises_after_kernel.py")
    result = discovered[path]
    line = line_of(path, "raise RuntimeError")
    assert (result.error, result.error_line) == (
        "RuntimeError: Found no NVIDIA driver on your system (while importing the module)",
        line,
    )
    assert [k.name for k in result.kernels] == ["double_1024"]


def test_factory_without_arguments_is_explained_not_failed(discovered):
    result = discovered[discovery_file("cases.py")]
    assert result.error is None
    assert len(result.notes) == 1 and result.notes[0].startswith("needs_arguments: factory needs arguments (N)")
    # a factory already called at module level needs no cases and gets no note
    assert discovered[discovery_file("jit_kernels.py")].notes == ()


def test_main_block_never_runs_and_hard_coded_cuda_target_gets_the_arch(discovered):
    assert discovered[discovery_file("prim_funcs.py")].error is None  # its __main__ block raises SystemExit
    negate = kernel_named(discovered[discovery_file("jit_kernels.py")], "negate_8192")
    assert negate.status == "ok" and negate.arch == "sm_90"


def _store_line(path):
    return line_of(path, "C[bx * block + i] = A[bx * block + i] + B[bx * block + i]")


def test_aligned_add_has_128_bit_accesses_mapped_to_the_store_line(discovered):
    path = discovery_file("prim_funcs.py")
    kernel = kernel_named(discovered[path], "add_2048")
    line = _store_line(path)
    assert sorted((a.kind, a.buffer, a.lanes, a.bits, a.line) for a in kernel.accesses) == [
        ("load", "A", 8, 128, line),
        ("load", "B", 8, 128, line),
        ("store", "C", 8, 128, line),
    ]
    cuda = kernel.source.splitlines()
    for access in kernel.accesses:
        assert access.cuda_lines and all(kernel.line_map[n - 1] == line for n in access.cuda_lines)
        assert all("uint4" in cuda[n - 1] and access.buffer in cuda[n - 1] for n in access.cuda_lines)
    assert kernel.access_summary() == {"128-bit": 3, "narrow": 0, "scalar": 0}


def test_unaligned_add_has_scalar_accesses_mapped_to_the_same_line(discovered):
    path = discovery_file("prim_funcs.py")
    kernel = kernel_named(discovered[path], "add_2047")
    line = _store_line(path)
    assert sorted((a.kind, a.buffer, a.lanes, a.line) for a in kernel.accesses) == [
        ("load", "A", 1, line),
        ("load", "B", 1, line),
        ("store", "C", 1, line),
    ]
    cuda = kernel.source.splitlines()
    store = next(a for a in kernel.accesses if a.kind == "store")
    assert any("i_s" in cuda[n - 1] and "C[" in cuda[n - 1] for n in store.cuda_lines)
    assert "uint4" not in kernel.source
    # the serial lane loop that replaced the vector is visible in the post-vectorize snapshot
    assert "i_s" in kernel.snapshot("vectorize_loop").funcs[0].script


def test_cuda_text_has_no_line_directives_and_the_map_covers_every_line(discovered):
    for result in discovered.values():
        for kernel in result.kernels:
            assert "#line" not in kernel.source
            assert kernel.source_with_directives.count("#line") > 0
            assert len(kernel.line_map) == len(kernel.source.splitlines())


@pytest.fixture(scope="module")
def norms(inspected):
    return inspected([NORMS])[NORMS]


def test_reduce_sum_macro_maps_to_the_users_call_line(norms):
    kernel = kernel_named(norms, "rms_norm_1024")
    line = line_of(NORMS, "T.reduce_sum(A_pow, A_powsum, dim=1)")
    cuda = kernel.source.splitlines()
    all_reduce = [n for n, text in enumerate(cuda, 1) if "AllReduce" in text]
    assert all_reduce and all(kernel.line_map[n - 1] == line for n in all_reduce)
    assert "reduce_op.py" not in kernel.source_with_directives
    frontend = kernel.snapshot("frontend").funcs[0]
    assert line in {stmt.line for stmt, _ in ir.walk(frontend.body)}


def test_gemm_expansion_maps_to_the_gemm_call_and_declarations_to_their_alloc(norms):
    kernel = kernel_named(norms, "gemm_1024")
    cuda = kernel.source.splitlines()
    gemm_line = line_of(NORMS, "T.gemm(A_shared, B_shared, C_local)")
    wgmma = [n for n, text in enumerate(cuda, 1) if "wgmma_ss" in text]
    assert wgmma and all(kernel.line_map[n - 1] == gemm_line for n in wgmma)
    decl = next(n for n, text in enumerate(cuda, 1) if re.match(r"\s*float C_local\[128\];", text))
    assert kernel.line_map[decl - 1] == line_of(NORMS, "C_local = T.alloc_fragment")


def test_layouts_are_structured_and_the_visualization_text_is_captured(norms):
    kernel = kernel_named(norms, "rms_norm_1024")
    by_name = {(lay.kind, lay.name): lay for lay in kernel.layouts}
    a_local = by_name[("buffer", "A_local")]
    assert (a_local.input_shape, a_local.output_shape, a_local.thread, a_local.replicate) == (
        (1, 1024),
        (8,),
        "_j // 8",
        1,
    )
    assert a_local.line == line_of(NORMS, "A_local = T.alloc_fragment")
    assert a_local.thread_grid[0][:9] == (0, 0, 0, 0, 0, 0, 0, 0, 1)
    assert by_name[("buffer", "A_powsum")].replicate == 128
    loops = [lay for lay in kernel.layouts if lay.kind == "loop"]
    assert {lay.line for lay in loops} >= {line_of(NORMS, "for i, j in T.Parallel(1, N):")}
    assert "A_local inferred layout:" in kernel.layout_text and "Replicate:  128" in kernel.layout_text


def test_compiler_warnings_from_fd2_are_captured_per_kernel(inspected):
    path = os.path.join(DATA, "uncleared.py")
    kernel = inspected([path])[path].kernels[0]
    assert any("`acc` is read before anything writes it" in w for w in kernel.warnings), kernel.warnings


def test_bad_files_give_one_line_errors_and_keep_the_other_results(inspected):
    paths = [os.path.join(DATA, f) for f in ("bad_syntax.py", "frontend_error.py", "crashes_in_second_kernel.py")]
    results = inspected(paths)
    assert (results[paths[0]].error, results[paths[0]].error_line) == (
        "SyntaxError: invalid syntax (while importing the module)",
        3,
    )
    frontend = results[paths[1]]
    assert [(k.name, k.status) for k in frontend.kernels] == [("fine", "ok"), ("broken_factory[N=1024]", "error")]
    assert (frontend.kernels[1].error, frontend.kernels[1].error_line) == (
        "NameError: name 'undefined_name' is not defined (while compiling)",
        line_of(paths[1], "undefined_name[i]"),
    )
    crashed = results[paths[2]]
    assert [(k.name, k.status) for k in crashed.kernels] == [("scaled[N=2048]", "ok"), ("scaled[N=0]", "error")]
    assert crashed.kernels[1].error == "worker crashed (SIGSEGV) while compiling this kernel"
    for result in results.values():
        for message in [result.error] + [k.error for k in result.kernels]:
            assert message is None or ("\n" not in message and "Traceback" not in message)


def test_timeout_reports_the_file_and_spares_the_others(inspected):
    slow, fine = os.path.join(DATA, "sleeps.py"), discovery_file("prim_funcs.py")
    results = inspected([slow, fine], timeout=10)
    assert results[slow].error == "worker timed out after 10 s while importing the module"
    assert len(results[fine].kernels) == 3


def test_nothing_is_written_next_to_user_files_or_into_home(tmp_path):
    user_dir = tmp_path / "kernels"
    shutil.copytree(DISCOVERY, user_dir)
    home = tmp_path / "home"
    home.mkdir()
    before = sorted(p.relative_to(user_dir) for p in user_dir.rglob("*"))
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": os.path.join(ROOT, "src")}
    env.pop("TILELANG_CACHE_DIR", None)
    proc = run_cli(str(user_dir), "--format", "json", "--no-cache", cwd=str(user_dir), env=env)
    assert proc.returncode == 2, proc.stderr  # raises_after_kernel.py is an import error
    assert sorted(p.relative_to(user_dir) for p in user_dir.rglob("*")) == before
    assert list(home.iterdir()) == []


def test_file_factory_target_with_arguments(tmp_path):
    target = discovery_file("cases.py") + "::needs_arguments"
    proc = run_cli(target, "-a", "N=2048", "--format", "json")
    document = json.loads(proc.stdout)
    assert [k["name"] for k in document["kernels"]] == ["needs_arguments[N=2048]"]
    assert proc.returncode == 0, proc.stderr


def test_dump_writes_cuda_tir_and_layouts(tmp_path):
    proc = run_cli(NORMS, "--dump", str(tmp_path), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "norms" / "rms_norm_1024"
    names = sorted(p.name for p in folder.iterdir())
    assert names == [
        "kernel.cu",
        "kernel.line.cu",
        "layouts.json",
        "layouts.txt",
        "tir.device.py",
        "tir.frontend.py",
        "tir.layout_inference.py",
        "tir.vectorize_loop.py",
    ]
    assert "#line" in (folder / "kernel.line.cu").read_text() and "#line" not in (folder / "kernel.cu").read_text()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_cuda_text_is_what_get_kernel_source_returns(tmp_path, inspected):
    """The CUDA users see (and `cuda_lines` index) is tilelang's own get_kernel_source() text."""
    path = discovery_file("prim_funcs.py")
    script = tmp_path / "compile.py"
    script.write_text(
        "import importlib.util, sys\n"
        "import tilelang\n"
        f"spec = importlib.util.spec_from_file_location('k', {path!r})\n"
        "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)\n"
        "kernel = tilelang.compile(m.add_2047, target={'kind': 'cuda', 'arch': 'sm_90'})\n"
        "sys.stdout.write(kernel.get_kernel_source())\n"
    )
    env = {
        **os.environ,
        "TILELANG_DISABLE_CACHE": "1",
        "TILELANG_CACHE_DIR": str(tmp_path / "cache"),
        "TILELANG_PRINT_ON_COMPILATION": "0",
    }
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert kernel_named(inspected([path])[path], "add_2047").source == proc.stdout


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not on PATH")
def test_nvcc_option_records_ptxas_resource_usage(inspected):
    path = discovery_file("prim_funcs.py")
    result = inspected([path], run_nvcc=True)[path]
    usage = kernel_named(result, "add_2048").ptxas
    assert usage.get("error") is None, usage
    assert usage["registers"] > 0 and usage["spill_stores"] == 0 and usage["smem_bytes"] == 0


def test_deep_expression_compiles_on_the_large_worker_stack(inspected):
    path = os.path.join(DATA, "deep_expression.py")
    result = inspected([path])[path]
    assert [(k.name, k.status, k.error) for k in result.kernels] == [("deep_10k", "ok", None)]


def test_unchanged_files_are_served_from_the_cache_and_edits_invalidate_it(tmp_path):
    package = tmp_path / "mykernels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    shutil.copy(discovery_file("prim_funcs.py"), package / "factories.py")
    user_file = tmp_path / "use.py"
    user_file.write_text(
        "import tilelang\nfrom mykernels.factories import elementwise_add\n\nadd_2048 = elementwise_add(2048)\n"
    )
    env = {**os.environ, "TL_INSPECT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": os.path.join(ROOT, "src")}

    def run():
        proc = run_cli(str(user_file), "--format", "json", "--exit-zero", env=env)
        assert proc.returncode == 0, proc.stderr
        document = json.loads(proc.stdout)
        kernel = document["kernels"][0]
        return kernel["name"], kernel["vector_accesses"]["128-bit"], document["files"][0]["cached"]

    assert run() == ("add_2048", 3, False)
    assert run() == ("add_2048", 3, True)
    # an edit in an imported module of another folder invalidates the entry, and is seen
    factories = package / "factories.py"
    factories.write_text(factories.read_text().replace("B[bx * block + i]\n", "B[bx * block + i + 1]\n"))
    assert run() == ("add_2048", 0, False)
    assert run() == ("add_2048", 0, True)
    user_file.write_text(user_file.read_text() + "\n")
    assert run()[2] is False
    proc = run_cli(
        str(user_file), "--format", "json", "--no-cache", env={**env, "TL_INSPECT_CACHE_DIR": str(tmp_path / "unused")}
    )
    assert proc.returncode in (0, 1) and not (tmp_path / "unused").exists()


def test_names_that_match_nothing_are_errors_not_silence(tmp_path):
    proc = run_cli(discovery_file("cases.py") + "::nope", os.path.join(DATA, "bad_cases.py"), "--format", "json")
    assert proc.returncode == 2
    errors = {os.path.basename(f["path"]): f["error"] for f in json.loads(proc.stdout)["files"]}
    assert errors == {
        "cases.py": f"{discovery_file('cases.py')}::nope: no kernel or factory named 'nope' in this file",
        "bad_cases.py": "TL_INSPECT_CASES entry 'scale': expected a list of keyword-argument dicts, or one dict "
        "with 'sweep': {NAME: [values]}, got {'N': 1024}",
    }


def test_a_built_kernel_takes_its_run_time_lengths_from_a_and_refuses_other_names():
    target = os.path.join(FIXTURES, "kernels", "vec_elementwise_1d.py") + "::gelu_any_length"
    given = run_cli(target, "-a", "N=1048576", "--format", "json")
    assert given.returncode == 1, given.stderr
    (kernel,) = json.loads(given.stdout)["kernels"]
    # the value names the case --measure runs the kernel at; the kernel itself is the one the file built
    assert kernel["name"] == "gelu_any_length[N=1048576]"
    assert [f["slug"] for f in kernel["findings"]] == ["lane-dependent-predicate"]
    other = run_cli(target, "-a", "M=3", "--format", "json")
    assert other.returncode == 2
    (file,) = json.loads(other.stdout)["files"]
    assert file["error"] == (
        f"{target}: -a M: gelu_any_length is a kernel already built, and -a can only give "
        "values to its run-time lengths and scalars (N)"
    )


def test_async_copies_into_shared_memory_count_as_global_accesses(norms, inspected):
    copy_a, copy_b = line_of(NORMS, "T.copy(A[by * block_M"), line_of(NORMS, "T.copy(B[k * block_K")
    hopper = kernel_named(norms, "gemm_1024")
    assert sorted((a.via, a.buffer, a.width_class, a.line) for a in hopper.accesses if a.via) == [
        ("tma", "A", "128-bit", copy_a),
        ("tma", "B", "128-bit", copy_b),
    ]
    assert all("tma_" in hopper.source.splitlines()[n - 1] for a in hopper.accesses if a.via for n in a.cuda_lines)
    ampere = kernel_named(inspected([NORMS], arch="sm_80")[NORMS], "gemm_1024")
    copies = {(a.via, a.buffer, a.lanes, a.bits, a.line) for a in ampere.accesses if a.via}
    assert copies == {("cp.async", "A", 8, 128, copy_a), ("cp.async", "B", 8, 128, copy_b)}
    assert all(
        "cp_async_gs<16>" in ampere.source.splitlines()[n - 1]
        for a in ampere.accesses
        if a.via
        for n in a.cuda_lines[:1]
    )
