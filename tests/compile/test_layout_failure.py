"""tl.LayoutInference's "no available layout found", explained on real kernels: the T.Parallel nest and
fragments the threads do not divide, and the nearest shape that compiles (proven by lowering it)."""

from __future__ import annotations

import os

from conftest import ROOT, inspect_files, kernel_named, run_cli

NO_LAYOUT = os.path.join("tests", "data", "no_layout.py")
LOOP_LINE = 14  # the first `for i, j in T.Parallel(blk_m, N)`


def test_the_one_line_error_names_the_fragments_the_threads_and_a_shape_that_compiles():
    result = inspect_files([os.path.join(ROOT, NO_LAYOUT)], prove=False)[os.path.join(ROOT, NO_LAYOUT)]
    k4095 = kernel_named(result, "rms_norm[M=256,N=4095]")
    assert k4095.status == "error"
    assert k4095.error == (
        "InternalError: no layout for fragments sq[1, 4095], x[1, 4095] over 256 threads "
        "(T.Parallel at line 14); N=4096 compiles (while compiling)"
    )
    assert k4095.error_line == LOOP_LINE
    assert kernel_named(result, "rms_norm[M=256,N=1000]").error.endswith(
        "(T.Parallel at line 14); N=1024 compiles (while compiling)"
    )
    # the shape it suggests really compiles, as a case of its own
    assert kernel_named(result, "rms_norm[M=256,N=4096]").status == "ok"
    # two rows per block: 128 x 2 iterations make 256, so 3968 would fit too, but 4096 is nearer
    rows = kernel_named(result, "rms_norm_4095_rows_of_2")
    assert "no layout for fragments sq[2, 4095], x[2, 4095] over 256 threads" in rows.error
    assert rows.error.endswith("; 4095 -> 4096 compiles (while compiling)")  # no argument named 4095
    assert k4095.error_detail.splitlines() == [
        "tl.LayoutInference found no layout for 4095 iterations over 256 threads: 4095 = 15 x 256 + 255, "
        "so the threads cannot share them evenly.",
        "Sizes that 256 threads do not divide:",
        "  line 14: T.Parallel(1, 4095)  (4095)",
        "  line 17: T.Parallel(1, 4095)  (4095)",
        "  line 10: fragment x[1, 4095]  (4095)",
        "  line 11: fragment sq[1, 4095]  (4095)",
        "Proof: rebuilt with 4095 -> 4096 (a multiple of 256), the kernel compiles.",
        "Fix: make N a multiple of 256 (4095 -> 4096) and mask the padding (a bounds check in the loop or a "
        "padded buffer).",
    ]


def test_concise_stays_one_line_and_full_output_and_html_show_the_explanation(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "src"), "COLUMNS": "200"}
    html = tmp_path / "html"
    full = run_cli(
        f"{NO_LAYOUT}::rms_norm", "-a", "M=256", "--sweep", "N=4095,4096", "--no-proofs", "--html", str(html), env=env
    )
    assert full.returncode == 2
    assert (
        f"error {NO_LAYOUT}:14: kernel rms_norm[M=256,N=4095] could not be compiled: InternalError: no layout "
        "for fragments sq[1, 4095], x[1, 4095] over 256 threads"
    ) in full.stdout
    assert "  Proof: rebuilt with 4095 -> 4096 (a multiple of 256), the kernel compiles." in full.stdout
    page = next(p for p in html.iterdir() if "4095" in p.name)
    text = page.read_text()
    assert '<pre class="error-detail">tl.LayoutInference found no layout for 4095 iterations' in text
    assert "rebuilt with 4095 -&gt; 4096 (a multiple of 256), the kernel compiles." in text
    concise = run_cli(
        f"{NO_LAYOUT}::rms_norm", "-a", "M=256", "--sweep", "N=4095,4096", "--no-proofs", "--format", "concise", env=env
    )
    (line,) = [ln for ln in concise.stdout.splitlines() if "4095" in ln]
    assert line.startswith(f"{NO_LAYOUT}:14:1: error: kernel rms_norm[M=256,N=4095] could not be compiled")
    assert line.endswith("N=4096 compiles (while compiling)")
