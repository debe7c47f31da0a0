"""The table of command-line variables: its records, and docs/variables.md generated from it."""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import REPO
from iree_kernels import settings
from iree_kernels.settings import ON_A_TERMINAL, SETTINGS, Setting

REGENERATE = ("PYTHONPATH=site_scons ./setup.sh python -m iree_kernels.settings --markdown "
              "> docs/variables.md")


def test_docs_variables_md_is_what_the_table_generates():
    written = (REPO / "docs/variables.md").read_text()
    assert written == settings.markdown(), f"docs/variables.md is stale; run: {REGENERATE}"
    assert REGENERATE.split(" > ")[0].split("./setup.sh ")[1] in written   # says how


def test_the_generator_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "iree_kernels.settings", "--markdown"],
                         cwd=REPO, env={"PYTHONPATH": str(REPO / "site_scons")},
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out == settings.markdown()


def test_every_record_is_one_well_formed_variable():
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    for s in SETTINGS:
        assert re.fullmatch(r"[A-Z][A-Z0-9_]*", s.name) and s.help, s
        assert s.kind in ("text", "bool", "enum"), s
        if s.kind == "bool":
            assert s.default in ("yes", "no", ON_A_TERMINAL), s
        if s.kind == "enum":
            assert s.default in s.allowed, s
        else:
            assert s.allowed == (), s


def test_every_variable_is_a_row_of_the_docs():
    rows = re.findall(r"^\| `([A-Z0-9_]+)` \|", settings.markdown(), re.M)
    assert rows == [s.name for s in SETTINGS]


def test_html_and_column_breaks_in_help_are_escaped():
    line = settings.markdown().splitlines()
    cuda = next(r for r in line if r.startswith("| `CUDA_ARCH` |"))
    assert "build/cuda-&lt;arch&gt;/" in cuda and cuda.count(" | ") == 3


@pytest.mark.parametrize("environ, terminal, expected", [
    ({}, False, "no"), ({}, True, "yes")])
def test_a_terminal_default_follows_the_output(environ, terminal, expected):
    assert settings.BY_NAME["PROGRESS"].default_value(environ, terminal) == expected


def test_an_environment_default_wins_where_set():
    cache = settings.BY_NAME["CACHE_DIR"]
    assert cache.default_value({}) == ""
    assert cache.default_value({"IREE_KERNELS_CACHE_DIR": ""}) == ""
    assert cache.default_value({"IREE_KERNELS_CACHE_DIR": "/shared/cache"}) == "/shared/cache"
    assert Setting("X", "x", "d").default_value({"X": "ignored"}) == "d"


@pytest.mark.parametrize("tool, variables", [
    ("ptx", ("CUDA_ARCH", "CUDA_COMPILER")),
    ("glsl", ("GLSL_COMPILER",)),
    ("hsaco", ("HIP_ARCH",)),
    ("iree_bench", ("IREE_BENCHMARKFLAGS",)),
    ("iree_hotspots", ("IREE_HOTSPOTFLAGS",)),
])
def test_each_tool_alone_defaults_its_variables_as_the_table_does(tool, variables):
    import SCons.Environment
    import iree_kernels
    env = SCons.Environment.Environment(tools=[tool], toolpath=[iree_kernels.tool_path()])
    for name in variables:
        assert env.subst(f"${name}") == settings.default(name), name


def test_the_kernel_checks_default_to_the_table_s_values():
    from iree_kernels.kinds.registry import KERNEL_KINDS
    defaults = {name: default for kind in KERNEL_KINDS.values()
                for name, default in kind.check_settings if name in settings.BY_NAME}
    assert set(defaults) >= {"PTX_ISA_VERSION", "CUDA_ARCH", "HIP_ARCH"}
    assert defaults == {name: settings.default(name) for name in defaults}
