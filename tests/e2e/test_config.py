"""`[tool.tl-inspect]`: discovery of the nearest pyproject.toml, validation, and precedence under flags."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from tl_inspect.cli import main
from tl_inspect.lint.settings import Config, ConfigError, check_memory, find_config, load_config, resolve_settings

# selection needs only a code, a slug and whether the rule is on by default; these stand for rules
# without compiling anything
RULES = [
    SimpleNamespace(code="TLV001", slug="scalarized-load", default=True),
    SimpleNamespace(code="TLV002", slug="lane-dependent-predicate", default=True),
    SimpleNamespace(code="TLV101", slug="missing-clear", default=True),
    SimpleNamespace(code="TLV102", slug="tilelang-warning", default=False),
]


def write_pyproject(folder, body: str) -> str:
    path = os.path.join(folder, "pyproject.toml")
    with open(path, "w") as f:
        f.write(body)
    return path


def codes(settings) -> list[str]:
    return [r.code for r in settings.rules]


def test_nearest_pyproject_with_the_section_wins(tmp_path):
    outer = write_pyproject(tmp_path, '[tool.tl-inspect]\narch = "sm_80"\n')
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    write_pyproject(tmp_path / "pkg", '[project]\nname = "pkg"\n')  # no section: skipped, as ruff does
    assert find_config(str(tmp_path / "pkg" / "sub")) == outer
    inner = write_pyproject(tmp_path / "pkg" / "sub", "[tool.tl-inspect]\n")
    assert find_config(str(tmp_path / "pkg" / "sub")) == inner


def test_every_key_is_read(tmp_path):
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "add.py").write_text("")
    path = write_pyproject(
        tmp_path,
        """
[tool.tl-inspect]
select = ["TLV0"]
ignore = "TLV002"
extend-select = ["missing-clear"]
arch = "sm_80"
timeout = 30
jobs = 2
fail-on = "warning"
[tool.tl-inspect.per-file-ignores]
"tests/*" = ["TLV001"]
"legacy.py" = ["lane-dependent-predicate"]
"**/gen/*.py" = ["ALL"]
[tool.tl-inspect.cases]
"kernels/add.py::ew_add" = [{N = 2047}, {N = 2048, dtype = "float16"}]
"kernels/add.py::ew_scale" = {M = 256, sweep = {N = [4096, 4095], block = [512, 1024]}}
""",
    )
    config = load_config(path, RULES)
    assert (config.select, config.ignore, config.extend_select) == (("TLV0",), ("TLV002",), ("missing-clear",))
    assert (config.arch, config.timeout, config.jobs, config.fail_on) == ("sm_80", 30.0, 2, "warning")
    assert config.cases_for(str(tmp_path / "kernels" / "add.py")) == {
        "ew_add": [{"N": 2047}, {"N": 2048, "dtype": "float16"}],
        "ew_scale": [{"M": 256, "N": n, "block": b} for n in (4096, 4095) for b in (512, 1024)],
    }
    assert config.cases_for(str(tmp_path / "other.py")) == {}
    assert config.ignored_for(str(tmp_path / "tests" / "t.py")) == ["TLV001"]
    assert config.ignored_for(str(tmp_path / "a" / "legacy.py")) == ["lane-dependent-predicate"]
    assert config.ignored_for(str(tmp_path / "gen" / "k.py")) == ["ALL"]
    assert config.ignored_for(str(tmp_path / "x" / "gen" / "k.py")) == ["ALL"]
    assert config.ignored_for(str(tmp_path / "kernels" / "add.py")) == []
    settings = resolve_settings(config, RULES)
    assert codes(settings) == ["TLV001", "TLV101"]
    assert settings.rules_for(str(tmp_path / "tests" / "t.py")) == [RULES[2]]


@pytest.mark.parametrize(
    "body,expected",
    [
        ('selct = ["TLV001"]', "unknown key 'selct' (did you mean 'select'?)"),
        ("colour = true", "unknown key 'colour'; known keys: select, ignore"),
        ('arch = "90"', "arch: expected a CUDA arch such as 'sm_90', got '90'"),
        ("timeout = -1", "timeout: expected a number of seconds above 0, got -1"),
        ("timeout = nan", "timeout: expected a number of seconds above 0, got nan"),
        ('max-memory = "lots"', "max-memory: expected a size such as 4096 (MiB), '512M' or '4G', got 'lots'"),
        ('jobs = "4"', "jobs: expected a whole number of workers (0: one per CPU), got '4'"),
        ('fail-on = "fatal"', "fail-on: expected one of info, warning, error, got 'fatal'"),
        ('select = ["NOPE"]', "select: unknown rule selector 'NOPE'"),
        ("ignore = [1]", "ignore: expected a list of strings, got [1]"),
        ('per-file-ignores = {"tests/*" = ["TLV9"]}', "per-file-ignores: 'tests/*': unknown rule selector 'TLV9'"),
        ('cases = {"add.py" = [{N = 1}]}', "cases: 'add.py': expected a key of the form 'file.py::factory'"),
        ('cases = {"missing.py::f" = [{N = 1}]}', "cases: 'missing.py::f': no file 'missing.py'"),
        ('cases = {"pyproject.toml::f" = 1}', "cases: 'pyproject.toml::f': expected a list of keyword-argument dicts"),
        ('cases = {"pyproject.toml::f" = {sweep = {N = []}}}', "'sweep' expects {NAME: [value, ...]} with non-empty"),
        ('cases = {"pyproject.toml::f" = {N = 1, sweep = {N = [2]}}}', "'pyproject.toml::f': N both fixed and swept"),
        ("select = [", "invalid TOML"),
    ],
)
def test_bad_configuration_is_one_error_naming_the_file(tmp_path, body, expected):
    path = write_pyproject(tmp_path, f"[tool.tl-inspect]\n{body}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(path, RULES)
    message = str(caught.value)
    assert message.startswith(path + ":")
    assert expected in message
    assert "\n" not in message


def test_command_line_overrides_the_file(tmp_path):
    path = write_pyproject(
        tmp_path,
        """[tool.tl-inspect]
select = ["TLV001"]
extend-select = ["TLV101"]
arch = "sm_80"
jobs = 3
timeout = 10
fail-on = "error"
""",
    )
    config = load_config(path, RULES)
    from_file = resolve_settings(config, RULES)
    assert codes(from_file) == ["TLV001", "TLV101"]
    assert (from_file.arch, from_file.jobs, from_file.timeout, from_file.fail_on) == ("sm_80", 3, 10.0, "error")

    flags = resolve_settings(config, RULES, arch="sm_86", jobs=1, timeout=5.0, fail_on="info")
    assert (flags.arch, flags.jobs, flags.timeout, flags.fail_on) == ("sm_86", 1, 5.0, "info")
    # ruff's layering: --select replaces the file's selection, --extend-select and --ignore adjust it
    assert codes(resolve_settings(config, RULES, select="lane-dependent-predicate")) == ["TLV002"]
    assert codes(resolve_settings(config, RULES, extend_select="TLV002")) == ["TLV001", "TLV101", "TLV002"]
    assert codes(resolve_settings(config, RULES, ignore="TLV1")) == ["TLV001"]


def test_defaults_without_a_file():
    settings = resolve_settings(Config(), RULES)
    assert codes(settings) == ["TLV001", "TLV002", "TLV101"]
    assert (settings.arch, settings.jobs, settings.timeout, settings.fail_on) == ("sm_90", 0, None, "info")


def test_a_rule_off_by_default_runs_only_when_a_selector_names_it(tmp_path):
    assert codes(resolve_settings(Config(), RULES, extend_select="tilelang-warning")) == [
        "TLV001",
        "TLV002",
        "TLV101",
        "TLV102",
    ]
    assert codes(resolve_settings(Config(), RULES, select="TLV1")) == ["TLV101", "TLV102"]
    config = load_config(write_pyproject(tmp_path, '[tool.tl-inspect]\nextend-select = ["TLV102"]\n'), RULES)
    assert codes(resolve_settings(config, RULES)) == ["TLV001", "TLV002", "TLV101", "TLV102"]
    assert codes(resolve_settings(config, RULES, ignore="tilelang-warning")) == ["TLV001", "TLV002", "TLV101"]


@pytest.mark.parametrize(
    "flags,expected",
    [
        (["--arch", "ampere"], "--arch: expected a CUDA arch such as 'sm_90', got 'ampere'"),
        (["--jobs", "-2"], "--jobs: expected a whole number of workers"),
        (["--timeout", "nan"], "--timeout: expected a number of seconds above 0, got nan"),
        (
            ["--max-memory", "0"],
            "--max-memory: expected a size from 256M (what a worker needs beyond tilelang) to 1048576G, got '0'",
        ),
        (["--max-memory", "99999999999G"], "--max-memory: expected a size from 256M"),
        (["--select", "XYZ"], "unknown rule selector 'XYZ'"),
    ],
)
def test_bad_flag_values_exit_2(tmp_path, monkeypatch, capsys, flags, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "k.py").write_text("import tilelang\n")
    assert main([*flags, "k.py"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_cli_reports_a_bad_nearest_pyproject_and_exits_2(tmp_path, monkeypatch, capsys):
    path = write_pyproject(tmp_path, '[tool.tl-inspect]\nfail_on = "error"\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")
    assert main(["."]) == 2
    err = capsys.readouterr().err
    assert err == f"tl-inspect: error: {path}: [tool.tl-inspect]: unknown key 'fail_on' (did you mean 'fail-on'?)\n"


@pytest.mark.parametrize("raw,mib", [(512, 512), ("512", 512), ("512M", 512), ("4G", 4096), ("2GiB", 2048)])
def test_memory_sizes_are_read_in_mib(raw, mib):
    assert check_memory(raw) == mib
