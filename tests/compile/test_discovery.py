"""Zero-configuration discovery: factory cases inferred from a file's own calls (each rule and each refusal
on source text), and the fixtures of fixtures/discovery/inferred inspected with no configuration."""

from __future__ import annotations

import ast
import json
import os
import textwrap

import pytest
from conftest import FIXTURES, kernel_named, run_cli

from tl_inspect.inspector.discovery.inference import infer_calls, plain_factories

INFERRED = os.path.join(FIXTURES, "discovery", "inferred")


def calls_of(source: str, factories=("k",), namespace=None):
    inference = infer_calls(ast.parse(textwrap.dedent(source)), set(factories), namespace or {})
    found = {
        name: [(call.args, dict(call.kwargs), call.origin) for call in calls] for name, calls in inference.calls.items()
    }
    return found, inference.refusals


# ---------------------------------------------------------------- each inference rule


def test_literals_and_module_constants_in_main():
    found, refusals = calls_of(
        """
        def main():
            k(1024, 2048, dtype="float16", block=BLOCK)
    """,
        namespace={"BLOCK": 128},
    )
    assert found == {"k": [((1024, 2048), {"dtype": "float16", "block": 128}, "main() line 3")]}
    assert refusals == {}


def test_parameter_defaults_local_names_and_arithmetic():
    found, _ = calls_of("""
        def main(M=1024, scale=2):
            N = M * scale + 1
            half, rest = N // 2, -M
            k(M, N, half, rest, max(M, 4) ** 2)
    """)
    assert found["k"][0][0] == (1024, 2049, 1024, -1024, 1024**2)


def test_argparse_defaults_read_as_args_x_in_the_main_block():
    found, _ = calls_of("""
        import argparse
        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--m", type=int, default="512")
            parser.add_argument("--block-n", dest="bn", default=64)
            parser.add_argument("--check", action="store_true")
            args, _ = parser.parse_known_args()
            k(args.m, args.bn, args.check)
    """)
    assert found["k"] == [((512, 64, False), {}, "__main__ block line 9, argparse defaults")]


def test_helper_chain_from_test_functions_binds_the_values_passed():
    found, _ = calls_of("""
        def run_k(N, dtype="float16"):
            check(N * 2, dtype)

        def check(size, dtype):
            kernel = k.compile(N=size, dtype=dtype)

        def test_k_fp32():
            run_k(4096, dtype="float32")
    """)
    assert found["k"] == [
        ((), {"N": 8192, "dtype": "float32"}, "test_k_fp32() line 9 via run_k() line 3 via check() line 6")
    ]


def test_module_attributes_such_as_dtypes_are_read_not_called():
    import tilelang.language as T

    found, _ = calls_of("def main():\n    k(T.float16)\n", namespace={"T": T})
    assert found["k"][0][0] == (T.float16,)


def test_tensors_made_by_torch_from_plain_shapes_are_known_by_shape_and_dtype():
    import torch

    found, refusals = calls_of(
        """
        def main(M=64):
            import torch as th
            a = th.randn(M, 128).cuda().half()
            b = torch.zeros((M,), dtype=torch.bfloat16, device="cuda")
            c = torch.empty_like(a).to(torch.float32)
            k(a, b, c, torch.randint(0, 9, (4, 2)))
            k(torch.randn(a.numel()), a.view(-1, 32), a.shape[1], c.size(0))
            k(torch.randn(len(data)))
    """,
        namespace={"torch": torch},
    )
    shapes = [[str(v) for v in call[0]] for call in found["k"]]
    assert shapes == [
        ["Tensor(64x128,float16)", "Tensor(64,bfloat16)", "Tensor(64x128,float32)", "Tensor(4x2,int64)"],
        ["Tensor(8192,float32)", "Tensor(256x32,float16)", "128", "64"],
    ]
    assert refusals["k"] == ["main() line 9: `len(data)` is computed at run time"]


def test_plain_factories_are_functions_defining_a_prim_func_or_compiled_by_tilelang_compile():
    tree = ast.parse(
        textwrap.dedent("""
        def builds(N):
            @T.prim_func
            def main(A: T.Tensor((N,), "float32")):
                pass
            return main

        def helper(N):
            return N

        def wrapped(N):
            return make(N)

        kernel = tilelang.compile(wrapped(4))
    """)
    )
    assert plain_factories(tree) == {"builds", "wrapped"}


# ---------------------------------------------------------------- each refusal


@pytest.mark.parametrize(
    "body,reason",
    [
        ("for n in range(4):\n        k(n)", "`n` is a loop variable"),
        ("for n in [0] * 17:\n        k(n)", "`n` is a loop variable"),
        ("x = torch.randn(4)\n    k(x)", "`torch.randn(4)` is computed at run time"),
        ("k(open('sizes').read())", "is computed at run time"),
        ("k(undefined_name)", "`undefined_name` is not a literal, a module constant, a parameter default"),
        ("k(*sizes)", "`sizes` is not a literal"),
        ("k(*4)", "`*4` unpacks a value that is not a tuple"),
        ("k(**{'M': n})", "`n` is not a literal"),
        ("k(64 if torch.cuda.is_available() else 32)", "`torch.cuda.is_available()` is computed at run time"),
        ("k(64 if TENSOR else 32)", "`TENSOR` is a Tensor"),
        ("k(TENSOR)", "`TENSOR` is a Tensor"),
        ("with ctx() as n:\n        k(n)", "`n` is bound by a `with` statement"),
        ("k(1 << 100)", "too large to be a shape"),
        ("k(1 // 0)", "cannot be evaluated"),
    ],
)
def test_arguments_that_need_running_the_file_refuse_the_call_with_the_reason(body, reason):
    class Tensor:  # a module-level value that is no constant
        pass

    found, refusals = calls_of(f"def main():\n    {body}\n", namespace={"TENSOR": Tensor()})
    assert found == {}
    assert len(refusals["k"]) == 1 and refusals["k"][0].startswith("main() line ") and reason in refusals["k"][0]


def test_a_parameter_without_default_and_an_argparse_option_without_default_are_refused():
    _, refusals = calls_of("""
        def test_k(M):
            k(M)

        if __name__ == "__main__":
            parser = argparse.ArgumentParser()
            parser.add_argument("--n", type=int)
            args = parser.parse_args()
            k(args.n)
            k(args)
    """)
    assert refusals["k"] == [
        "__main__ block line 9: `--n` has no default",
        "__main__ block line 10: the argparse result itself is passed",
        "test_k() line 3: `M` is a parameter of test_k() without a default",
    ]


def test_module_level_calls_and_functions_nobody_calls_are_not_searched():
    found, refusals = calls_of("""
        kernel = k(1)

        def unused():
            k(2)
    """)
    assert (found, refusals) == ({}, {})


# ---------------------------------------------------------------- the fixtures, with no configuration

EXPECTED = {
    "main_defaults.py": [("scale[M=1024,N=2048,block_N=256]", "main() line 24")],
    "argparse_main.py": [("row_copy[M=512,N=4096]", "__main__ block line 30, argparse defaults")],
    "test_functions.py": [
        ("negate[N=4096,dtype=float16]", "test_negate_fp16() line 25 via run_negate() line 20"),
        ("negate[N=8192,dtype=float32]", "test_negate_fp32() line 29 via run_negate() line 20"),
        ("negate[N=1024,dtype=float16]", "test_negate_sizes() line 38 via run_negate() line 20"),
        ("negate[N=2048,dtype=float16]", "test_negate_sizes() line 38 via run_negate() line 20"),
    ],
    "all_defaults.py": [("fill", "jit_factory")],
    "cuda_at_import.py": [("halve_1024", "prim_func")],
    "explicit_wins.py": [("square[N=256]", "jit_factory")],
    "not_inferable.py": [],
    "eager_tensors.py": [("double[A=Tensor(256x1024,float16),block_N=256]", "main() line 23")],
    "autograd_apply.py": [
        ("scale_rows[batch=4,rows=512,cols=256,block=64,dtype=float16]", "main() line 40 via _scaled.forward() line 28")
    ],
    "config_object.py": [
        ("row_scale[M=256,N=512,block_N=128]", "main() line 44 via run() line 39 via RowScale.forward() line 33")
    ],
    "loops_and_branches.py": [
        ("add_one[N=1024,block=128]", "main() line 30"),
        ("add_one[N=2048,block=128]", "main() line 30"),
    ],
}


@pytest.fixture(scope="module")
def fixtures(inspected):
    return inspected([os.path.join(INFERRED, name) for name in EXPECTED], prove=False)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_style_of_kernel_file_is_found_with_no_configuration(fixtures, name):
    result = fixtures[os.path.join(INFERRED, name)]
    assert [(k.name, k.discovered_as) for k in result.kernels] == EXPECTED[name]
    assert all(k.status == "ok" for k in result.kernels), [k.error for k in result.kernels]


def test_a_factory_without_an_inferable_call_says_why_and_what_to_add(fixtures):
    result = fixtures[os.path.join(INFERRED, "not_inferable.py")]
    assert result.needs_cases == (("shift", ("N",)),)
    assert result.notes == (
        "shift: factory needs arguments (N); add TL_INSPECT_CASES = {'shift': [{...}]} or use "
        "FILE.py::shift -a NAME=VALUE; its calls are not inferable: main() line 22: "
        "`torch.load('input.pt')` is computed at run time",
    )


def _cuda_device() -> bool:
    import torch

    return torch.cuda.is_available()


@pytest.mark.skipif(_cuda_device(), reason="what a machine without a GPU says")
def test_cuda_at_import_names_the_line_and_keeps_the_kernels_bound_before_it(fixtures):
    result = fixtures[os.path.join(INFERRED, "cuda_at_import.py")]
    assert result.error_line == 15
    assert result.error.startswith("line 15 needed a CUDA device at import, and none can be used here (")
    assert "forked" not in result.error
    assert kernel_named(result, "halve_1024").status == "ok"


@pytest.mark.skipif(not _cuda_device(), reason="needs a CUDA device")
def test_with_a_gpu_a_file_runs_its_kernels_at_import_as_in_plain_python(tmp_path):
    path = tmp_path / "runs_at_import.py"
    path.write_text(
        textwrap.dedent("""\
        import tilelang
        import tilelang.language as T
        import torch


        @T.prim_func
        def double_1024(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(1024):
                    B[i] = A[i] * 2


        kernel = tilelang.compile(double_1024)
        A = torch.ones(1024, device="cuda")
        B = torch.empty_like(A)
        kernel(A, B)
        assert B.eq(2).all().item()
        """)
    )
    proc = run_cli(str(path), "--format", "json", "--no-proofs")
    document = json.loads(proc.stdout)
    assert document["files"][0]["error"] is None, document["files"][0]["error"]
    assert {k["name"]: k["status"] for k in document["kernels"]}["double_1024"] == "ok"


def test_no_infer_and_infer_cases_false_turn_inference_off(tmp_path):
    target = os.path.join(INFERRED, "main_defaults.py")
    proc = run_cli(target, "--no-infer", "--format", "json", "--no-proofs")
    document = json.loads(proc.stdout)
    assert (
        document["kernels"] == []
        and document["files"][0]["needs_cases"] == 'TL_INSPECT_CASES = {"scale": [{"M": ..., "N": ...}]}'
    )
    (tmp_path / "pyproject.toml").write_text("[tool.tl-inspect]\ninfer-cases = false\n")
    proc = run_cli(target, "--format", "json", "--no-proofs", cwd=str(tmp_path))
    assert json.loads(proc.stdout)["kernels"] == [], proc.stderr


def test_inferred_cases_are_capped_per_factory_with_a_note(tmp_path):
    source = open(os.path.join(INFERRED, "test_functions.py")).read()
    (tmp_path / "kernels.py").write_text(source)
    (tmp_path / "pyproject.toml").write_text("[tool.tl-inspect]\nmax-inferred-cases = 1\n")
    proc = run_cli("kernels.py", "--format", "json", "--no-proofs", cwd=str(tmp_path))
    document = json.loads(proc.stdout)
    assert [k["name"] for k in document["kernels"]] == ["negate[N=4096,dtype=float16]"]
    assert document["files"][0]["notes"] == [
        "negate: 4 cases inferred from its calls; inspecting the first 1 (max-inferred-cases)"
    ]


def test_the_summary_counts_files_in_json_concise_and_full():
    paths = [os.path.join(INFERRED, name) for name in ("main_defaults.py", "not_inferable.py", "cuda_at_import.py")]
    document = json.loads(run_cli(*paths, "--format", "json", "--no-proofs").stdout)
    line = 'TL_INSPECT_CASES = {"shift": [{"N": ...}]}'
    assert document["summary"] == {
        "files_with_kernels": 2,
        "files_failed": 1,
        "files_needing_cases": [{"path": paths[1], "add": line}],
        "kernels": 2,
    }
    phrase = "Files: 2 files with kernels, 1 with factories but no inferable call, 1 failed"
    concise = run_cli(*paths, "--format", "concise", "--no-proofs").stdout.splitlines()
    assert concise[-2:] == [f"{paths[1]}:1:1: note: no call of its factories could be inferred; add {line}", phrase]
    full = run_cli(*paths, "--no-proofs").stdout
    assert f"{phrase}\n  {paths[1]}: add {line}\n" in full


# ---------------------------------------------------------------- pure calls, dtypes and parametrize


def test_math_functions_on_known_values_and_from_imports():
    import math

    found, refusals = calls_of(
        """
        import math
        from math import prod
        def main(S=1000):
            k(math.ceil(S / 64), math.floor(S / 64), prod((2, 3, 4)), int(math.log2(S + 24)), max(S, 64))
    """,
        namespace={"math": math, "prod": math.prod},
    )
    assert found["k"][0][0] == (16, 15, 24, 10, 1000)
    assert refusals == {}


def test_tilelang_dtype_calls_and_torch_dtype_by_name():
    import tilelang.language as T
    import torch

    found, _ = calls_of(
        """
        def main(dtype=T.float16, name="bfloat16"):
            dt = T.dtype(dtype)
            k(dt, T.dtype("float32"), dt.as_torch(), getattr(torch, name))
    """,
        namespace={"T": T, "torch": torch},
    )
    assert found["k"][0][0] == (T.float16, T.float32, torch.float16, torch.bfloat16)


def test_dtype_calls_refused_when_not_a_dtype():
    import tilelang.language as T
    import torch

    _, refusals = calls_of(
        """
        def main(n=3):
            k(T.dtype("no_such_type"))
            k(getattr(torch, "randn"))
            k(T.dtype(n))
    """,
        namespace={"T": T, "torch": torch},
    )
    assert [r.split(": ", 1)[1] for r in refusals["k"]] == [
        "`T.dtype('no_such_type')` cannot be evaluated",
        "`getattr(torch, 'randn')` is no dtype of a module",
        "`T.dtype(n)` cannot be evaluated",
    ]


def test_parametrize_gives_one_context_per_tuple_and_refuses_unknown_lists():
    import pytest

    found, refusals = calls_of(
        """
        import pytest
        @pytest.mark.parametrize("m, n", [(128, 256), (SIZE, 512)])
        @pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
        def test_k(m, n, dtype):
            k(m, n, dtype)

        @pytest.mark.parametrize("m", load_sizes())
        def test_unknown(m):
            k(m)
    """,
        namespace={"pytest": pytest, "SIZE": 1024},
    )
    assert [(args, origin) for args, _, origin in found["k"]] == [
        ((128, 256, "float16"), "test_k(m=128, n=256, dtype=float16) line 6"),
        ((128, 256, "bfloat16"), "test_k(m=128, n=256, dtype=bfloat16) line 6"),
        ((1024, 512, "float16"), "test_k(m=1024, n=512, dtype=float16) line 6"),
        ((1024, 512, "bfloat16"), "test_k(m=1024, n=512, dtype=bfloat16) line 6"),
    ]
    assert refusals["k"] == [
        "test_unknown() line 10: `m` is parametrized from values not known: `load_sizes()` is computed at run time"
    ]


def test_parametrize_contexts_respect_the_cases_cap():
    found, _ = calls_of(
        """
        import pytest
        @pytest.mark.parametrize("m", SIZES)
        def test_k(m):
            k(m)
    """,
        namespace={"SIZES": list(range(40))},
    )
    assert [args for args, _, _ in found["k"]] == [(m,) for m in range(16)]


# ---------------------------------------------------------------- conditions, loops, unpacking, autograd


def test_conditional_expressions_comparisons_and_boolean_operators_on_known_values():
    found, _ = calls_of("""
        def main(D=192, dtype="float16", causal=False):
            block_N = 64 if D <= 128 else 32
            wide = dtype in ("float16", "bfloat16") and not causal
            k(block_N, 16 if 0 < D < 256 else 8, wide, causal or D, dtype == "float32")
    """)
    assert found["k"][0][0] == (32, 16, True, 192, False)


def test_a_known_if_test_binds_names_from_the_branch_that_runs_and_finds_the_others_calls():
    found, refusals = calls_of("""
        def main(stages=None, two_cta=True):
            if stages is not None:
                stages = stages
            else:
                stages = 6 if two_cta else 4
            if two_cta:
                k(stages)
            else:
                k(undefined)
    """)
    assert found["k"] == [((6,), {}, "main() line 8")]
    assert refusals == {
        "k": [
            "main() line 10: `undefined` is not a literal, a module constant, a parameter default or an argparse option"
        ]
    }


def test_loops_over_known_lists_give_one_call_per_item():
    found, _ = calls_of(
        """
        def main():
            for M in [1024, 2048]:
                for N, dtype in SHAPES:
                    k(M, N, dtype)
    """,
        namespace={"SHAPES": ((256, "float16"), (512, "float32"))},
    )
    assert [args for args, _, _ in found["k"]] == [
        (1024, 256, "float16"),
        (1024, 512, "float32"),
        (2048, 256, "float16"),
        (2048, 512, "float32"),
    ]


def test_star_and_double_star_of_known_tuples_and_dicts_are_spliced_into_the_call():
    found, _ = calls_of("""
        def run(M, N, block=64):
            k(M, N, block)

        def main(M=512):
            shape = (M, 2 * M)
            kwargs = {"block_M": 128, "dtype": "float16"}
            k(*shape, **kwargs)
            run(*shape, **{"block": 32})
    """)
    assert found["k"] == [
        ((512, 1024), {"block_M": 128, "dtype": "float16"}, "main() line 8"),
        ((512, 1024, 32), {}, "main() line 9 via run() line 3"),
    ]


def test_factories_held_in_names_and_module_dicts_are_called_as_themselves():
    def gemm():  # module-level objects the dict holds, found by identity
        pass

    found, refusals = calls_of(
        """
        def main(kernel="gemm", two_cta=False):
            chosen = gemm_2cta if two_cta else gemm
            chosen(1024)
            KERNELS[kernel](2048)
            k(gemm)
    """,
        factories=("gemm", "gemm_2cta", "k"),
        namespace={"gemm": gemm, "KERNELS": {"gemm": gemm}},
    )
    assert found == {"gemm": [((1024,), {}, "main() line 4"), ((2048,), {}, "main() line 5")]}
    assert refusals == {"k": ["main() line 6: `gemm` is a function, passed to the factory"]}


def test_autograd_function_apply_walks_forward_with_the_tensors_passed():
    import torch

    found, refusals = calls_of(
        """
        class _attention(torch.autograd.Function):
            @staticmethod
            def forward(ctx, q, causal):
                BATCH, H, N_CTX, D_HEAD = q.shape
                block_N = 64 if D_HEAD <= 128 else 32
                return k(BATCH, H, N_CTX, D_HEAD, causal, block_N, q.dtype)(q)

        attention = _attention.apply

        def main(B=8):
            q = torch.empty(B, 32, 1024, 64, dtype=torch.half, device="cuda").normal_().requires_grad_()
            attention(q, False)
            _attention.apply(q.float(), True)
            ctx_free = _attention.forward
            ctx_free(q, True)
    """,
        namespace={"torch": torch},
    )
    assert found["k"] == [
        ((8, 32, 1024, 64, False, 64, torch.float16), {}, "main() line 13 via _attention.forward() line 7"),
        ((8, 32, 1024, 64, True, 64, torch.float32), {}, "main() line 14 via _attention.forward() line 7"),
    ]
    assert refusals == {}


@pytest.mark.parametrize(
    "body,reason",
    [
        ("k(64 if torch_ready() else 32)", "`torch_ready()` is computed at run time"),
        ("k(1 if TENSOR == 2 else 0)", "`TENSOR` is a Tensor"),
        ("x = torch.zeros(4)\n    k(1 if x else 0)", "`x` is tested, and it is no plain value"),
        ("for n in load():\n        k(n)", "`n` is a loop variable"),
        ("k(**OBJECT)", "`**OBJECT` unpacks a value that is not a dict"),
        ("k(**{**base})", "unpacks another dict"),
    ],
)
def test_conditions_and_unpacking_that_need_running_the_file_are_refused(body, reason):
    import torch

    class Tensor:
        pass

    found, refusals = calls_of(
        f"def main():\n    {body}\n", namespace={"TENSOR": Tensor(), "OBJECT": (), "torch": torch}
    )
    assert found == {}
    assert len(refusals["k"]) == 1 and reason in refusals["k"][0], refusals


def test_tensors_from_literal_data_in_place_fills_and_a_tensors_dtype():
    import torch

    found, refusals = calls_of(
        """
        def main(sizes=(3, 5, 8)):
            offsets = torch.tensor(sizes, dtype=torch.int32, device="cuda")
            q = torch.empty(2, 64).normal_().uniform_().zero_()
            k(offsets, torch.tensor([[0.5, 1], [2, 3]]), torch.arange(16), q, q.dtype)
            k(torch.tensor([[1], [2, 3]]))
    """,
        namespace={"torch": torch},
    )
    assert [str(v) for v in found["k"][0][0]] == [
        "Tensor(3,int32)",
        "Tensor(2x2,float32)",
        "Tensor(16,int64)",
        "Tensor(2x64,float32)",
        "torch.float32",
    ]
    assert refusals["k"] == ["main() line 6: `torch.tensor([[1], [2, 3]])` is computed at run time"]


def test_elementwise_arithmetic_on_a_tensor_keeps_its_shape_and_promotes_as_torch_does():
    import torch

    found, refusals = calls_of(
        """
        def main(B=2, S=64):
            q = torch.randn((B, S), dtype=torch.bfloat16, device="cuda").requires_grad_(True) / 10
            ends = torch.ones(B, dtype=torch.int32).cuda() * S
            indices = torch.full((B, S), S, dtype=torch.int32).sort(-1)[0]
            k(q, ends, ends / 2, q + q, indices)
            k(q @ q)
    """,
        namespace={"torch": torch},
    )
    assert [str(v) for v in found["k"][0][0]] == [
        "Tensor(2x64,bfloat16)",
        "Tensor(2,int32)",
        "Tensor(2,float32)",
        "Tensor(2x64,bfloat16)",
        "Tensor(2x64,int32)",
    ]
    assert refusals["k"] == ["main() line 7: `q @ q` is computed at run time"]


def test_a_calls_arguments_are_made_before_the_call():
    found, _ = calls_of("""
        class Config:
            def __init__(self, M):
                self.M = M

        class Runner:
            def __init__(self, config):
                k(config.M)

        def main():
            Runner(Config(512))
    """)
    assert found["k"] == [((512,), {}, "main() line 11 via Runner.__init__() line 8")]


def test_objects_of_the_files_classes_carry_what_their_init_sets():
    found, refusals = calls_of("""
        class Config:
            def __init__(self, M, N=512):
                self.M = M
                self.N = N
                self.block = 128 if M >= 1024 else 64

        class Attention(nn.Module):
            def __init__(self, heads):
                self.heads = heads

            def forward(self, x):
                return k(self.heads, x)

        def run(config):
            return k(config.M, config.N, config.block)

        def main():
            config = Config(2048)
            run(config)
            model = Attention(16)
            model(3)
            model.forward(4)
            k(config.missing)
            k(config)
    """)
    assert found["k"] == [
        ((2048, 512, 128), {}, "main() line 20 via run() line 16"),
        ((16, 3), {}, "main() line 22 via Attention.forward() line 13"),
        ((16, 4), {}, "main() line 23 via Attention.forward() line 13"),
    ]
    assert refusals["k"] == [
        "main() line 24: `config.missing` is not set by Config.__init__",
        "main() line 25: a Config object is passed to the factory",
    ]


def test_a_list_or_dict_changed_by_a_method_call_is_no_longer_known():
    found, refusals = calls_of("""
        def main():
            sizes = [1024]
            options = {"block": 64}
            k(sizes, **options)
            sizes.append(2048)
            options.update(block=128)
            k(sizes)
            k(**options)
    """)
    assert found["k"] == [(([1024],), {"block": 64}, "main() line 5")]
    assert refusals["k"] == [
        "main() line 8: `sizes` is changed by `.append()`",
        "main() line 9: `options` is changed by `.update()`",
    ]
