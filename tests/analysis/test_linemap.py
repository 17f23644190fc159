"""The CUDA -> Python line map on hand-written codegen text: each re-attribution rule in isolation."""

from tl_inspect.inspector.lowering.linemap import build_line_map

USER, TILELANG = "/u/k.py", "/site-packages/tilelang/cuda/intrinsics/macro/wgmma_macro_generator.py"
REDUCE = "/site-packages/tilelang/language/reduce_op.py"


def mapped(text: str, gemm_lines=(), def_line=5, buffer_lines=None):
    source, line_map = build_line_map(text, lambda f: f == USER, def_line, buffer_lines or {}, list(gemm_lines))
    assert "#line" not in source
    return list(zip(source.splitlines(), line_map))


def test_statement_runs_until_its_block_closes_and_else_continues_it():
    text = (
        f'#line 5 "{USER}"\n'
        "  float acc[8];\n"
        "  int other;\n"
        f'#line 9 "{USER}"\n'
        "  for (int i = 0; i < 8; ++i) {\n"
        "    half_t v;\n"
        "    if (i < 3) {\n"
        "      v = A[i];\n"
        "    } else {\n"
        "      v = 0;\n"
        "    }\n"
        "    C[i] = v;\n"
        "  }\n"
        "  tl::fence();\n"
    )
    assert mapped(text, buffer_lines={"acc": 7}) == [
        ("  float acc[8];", 7),
        ("  int other;", None),
        ("  for (int i = 0; i < 8; ++i) {", 9),
        ("    half_t v;", 9),
        ("    if (i < 3) {", 9),
        ("      v = A[i];", 9),
        ("    } else {", 9),
        ("      v = 0;", 9),
        ("    }", None),
        ("    C[i] = v;", 9),
        ("  }", None),
        ("  tl::fence();", None),
    ]


def test_tilelang_internal_code_goes_to_the_gemm_call_or_the_enclosing_statement():
    text = (
        f'#line 12 "{USER}"\n'
        "  for (int k = 0; k < 4; ++k) {\n"
        f'#line 600 "{TILELANG}"\n'
        "    tl::wgmma_ss(desc_a, desc_b, C);\n"
        f'#line 160 "{REDUCE}"\n'
        "    red[0] = red[0] + x[k];\n"
        "  }\n"
    )
    assert mapped(text, gemm_lines=[14]) == [
        ("  for (int k = 0; k < 4; ++k) {", 12),
        ("    tl::wgmma_ss(desc_a, desc_b, C);", 14),
        ("    red[0] = red[0] + x[k];", 12),
        ("  }", None),
    ]


def test_nth_gemm_expansion_goes_to_the_nth_gemm_call():
    text = (
        f'#line 600 "{TILELANG}"\n'
        "  tl::wgmma_ss(a, b, S);\n"
        f'#line 20 "{USER}"\n'
        "  P[0] = S[0];\n"
        f'#line 601 "{TILELANG}"\n'
        "  tl::wgmma_rs(P, v, O);\n"
    )
    assert [line for _, line in mapped(text, gemm_lines=[18, 22])] == [18, 20, 22]


def test_a_loop_made_by_a_pass_belongs_to_the_statement_of_its_body():
    text = (
        "  for (int i_s = 0; i_s < 8; ++i_s) {\n"
        "    if (bx * 1024 + i_s < 2047) {\n"
        f'#line 15 "{USER}"\n'
        "      C[i_s] = A[i_s];\n"
        "    }\n"
        "  }\n"
    )
    assert [line for _, line in mapped(text)] == [15, 15, 15, None, None]
