"""Which iree-compile flags and iree-opt pipelines a manifest may give (project/compiler_flags).

The last tests hold the rule against IREE's own help: every flag and pass
option whose help says it takes a file, path, folder, command or tool is refused.
They run iree-compile and iree-opt with --help-list-hidden.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from iree_kernels.core import toolchains
from iree_kernels.module.derived import iree_opt
from iree_kernels.project.compiler_flags import pass_options, refused_flag, refused_pipeline
from iree_kernels.project.option_files import FILE_FLAGS


@pytest.mark.parametrize("flag", [
    '--iree-hal-preprocess-executables-with=sh -c "touch /tmp/x"',
    "--iree-hal-dump-executable-sources-to=/outside",
    "--iree-llvmcpu-embedded-linker-path=/bin/sh",
    "--iree-llvmcpu-system-linker-path=sh",
    "--iree-plugin=evil",
    "--iree-load-plugin=/tmp/evil.so",
    "--load=/tmp/evil.so",
    "--exec-on-ir-change=sh",
    "--mlir-pass-pipeline-crash-reproducer=/tmp/r.mlir",
    "--iree-hal-executable-object-search-path=/",
    "--iree-hal-substitute-executable-source=x=/etc/passwd",
    "--iree-opt-export-parameters=scope=/tmp/p.irpa",
])
def test_a_flag_that_runs_a_program_or_names_a_path_is_refused(flag):
    assert refused_flag(flag)


@pytest.mark.parametrize("flag", [
    "--iree-codegen-transform-dialect-library=/etc/passwd",
    "--iree-codegen-tuning-spec-path=../outside/spec.mlir",
    "--iree-link-bitcode=sm_80=kernels/../../x.bc",
])
def test_a_tracked_file_flag_naming_a_path_outside_the_repository_is_refused(flag):
    assert "outside the repository" in refused_flag(flag)


@pytest.mark.parametrize("flag", [
    "--iree-opt-level=O3",
    "--iree-llvmcpu-target-cpu=host",
    "--iree-dispatch-creation-enable-aggressive-fusion",
    "--iree-codegen-transform-dialect-library=kernels/spec.mlir@apply",
    "--iree-codegen-tuning-spec-path=kernels/tuning.mlir",
    "--iree-preprocessing-pass-pipeline=builtin.module(util.func(canonicalize,cse))",
    "--mlir-disable-threading",
])
def test_iree_flags_that_change_only_the_code_are_taken(flag):
    assert refused_flag(flag) is None


def test_a_preprocessing_pipeline_is_held_to_the_rule_of_pass_pipelines():
    why = refused_flag("--iree-preprocessing-pass-pipeline="
                       "builtin.module(iree-util-dump-module{path=/tmp/m.mlir})")
    assert why.startswith("runs a pass pipeline that uses the pass 'iree-util-dump-module'")


def test_llvm_flags_are_refused_as_not_iree_s():
    assert refused_flag("--inline-threshold=1000").startswith("is not one of IREE's or MLIR's")


@pytest.mark.parametrize("pipeline", [
    'builtin.module(hal.executable(iree-hal-preprocess-executables-with-tool{command={sh -c "id"}}))',
    "builtin.module(hal.executable(iree-hal-dump-executable-sources{path=/outside}))",
    "builtin.module(iree-transform-dialect-interpreter{library-file-name=/etc/passwd})",
    "builtin.module(iree-transform-dialect-interpreter)",
    "builtin.module(iree-preprocessing-apply-pdl-patterns{patterns-file=/etc/passwd})",
    "builtin.module(iree-util-link-modules{link-module=/etc/x.mlir})",
    "builtin.module(gpu-module-to-binary{toolkit=/tmp opts=-v})",
    "builtin.module(iree-preprocessing-attr-based-pipeline)",
    "builtin.module(hal.executable(iree-hal-preprocess-executables-with-pipeline{pipeline=cse}))",
])
def test_a_pipeline_with_a_pass_that_runs_a_program_or_names_a_path_is_refused(pipeline):
    assert refused_pipeline(pipeline)


@pytest.mark.parametrize("pipeline", [
    "builtin.module(hal.executable(hal.executable.variant(builtin.module(canonicalize,cse))))",
    "builtin.module(func.func(canonicalize{max-iterations=3 region-simplify=normal}))",
    "builtin.module(hal.executable(hal.executable.variant(builtin.module("
    "iree-codegen-gpu-tile{tiling-level=thread})))",
])
def test_a_pipeline_of_code_changing_passes_is_taken(pipeline):
    assert refused_pipeline(pipeline) is None


def test_pass_options_names_every_pass_and_its_options_in_order():
    assert pass_options("builtin.module(func.func(canonicalize{max-iterations=3 "
                        "test-convergence=true}), a{b={c=d e} f='g h'}, cse)") == [
        ("builtin.module", []), ("func.func", []),
        ("canonicalize", ["max-iterations", "test-convergence"]), ("a", ["b", "f"]),
        ("cse", [])]


@pytest.mark.parametrize("pipeline, why", [
    ("builtin.module(cse{x=1", "has an option block '{' that is not closed"),
    ("builtin.module(cse{x='1})", "has an option block '{' that is not closed"),
    ("builtin.module(%cse)", "holds '%' where a pass name was expected"),
])
def test_a_malformed_pipeline_is_named_as_such(pipeline, why):
    assert refused_pipeline(pipeline) == why


# Flags and pass options whose help mentions a path or a program but that take none.
_NOT_PATHS = {"--iree-hal-benchmark-dispatch-repeat-count", "--iree-input-type",
              "--iree-llvmgpu-prefetch-num-stages"}
_SAYS_PATH = re.compile(r"\b(file|files|path|paths|directory|dir|command|commands|tool|tools|"
                        r"toolkit|plugin|dump|dumps)\b", re.I)


def _help(program: str) -> str:
    return subprocess.run([toolchains.real_program(program), "--help-list-hidden"],
                          capture_output=True, text=True, timeout=120, check=True).stdout


def test_every_iree_compile_flag_whose_help_names_a_path_or_program_is_refused():
    taken = []
    for match in re.finditer(r"^  --([A-Za-z0-9][A-Za-z0-9_.-]*)(=<([^>]*)>)?\s+- (.*)$",
                             _help(toolchains.iree_compile()), re.M):
        name, value, text = match.group(1), match.group(3), match.group(4)
        says = bool(value) and (re.search(r"file|dir|path", value) or _SAYS_PATH.search(text))
        flag = f"--{name}=x" if value else f"--{name}"
        if says and name not in FILE_FLAGS and f"--{name}" not in _NOT_PATHS \
                and refused_flag(flag) is None:
            taken.append(name)
    assert taken == []


def test_every_iree_opt_pass_option_whose_help_names_a_path_or_program_is_refused():
    taken, current = [], None
    for line in _help(iree_opt()).splitlines():
        named = re.match(r"^      --([A-Za-z0-9][A-Za-z0-9_.-]*)\s+-   ", line)
        if named:
            current = named.group(1)
            continue
        option = re.match(r"^        --([A-Za-z0-9][A-Za-z0-9_.-]*)(=<([^>]*)>)?\s+- (.*)$", line)
        if option and current:
            name, value, text = option.group(1), option.group(3) or "", option.group(4)
            says = re.search(r"file|dir|path", value) or (
                value in ("string", "value") and _SAYS_PATH.search(text))
            if says and refused_pipeline(f"builtin.module({current}{{{name}=x}})") is None:
                taken.append(f"{current}{{{name}}}")
    assert taken == []
