"""Kernel kinds: the table in iree_kernels.ir.targets, and the tools that add them to env.Kernel."""
from __future__ import annotations

from pathlib import Path

import pytest
import SCons.Environment
import SCons.Node.Python

import iree_kernels
from iree_kernels.scons.kernels import command_program, kernel_compiler, tool_version, versions_reached
from iree_kernels.kinds.registry import KERNEL_KINDS

COMPILED = [kind for kind in KERNEL_KINDS.values() if kind.compiles_to]


def _environment(tools):
    return SCons.Environment.Environment(tools=list(tools), toolpath=[iree_kernels.tool_path()])


@pytest.mark.parametrize("kind", COMPILED, ids=lambda kind: kind.suffix)
def test_each_compiled_kind_has_a_tool_that_adds_it_to_the_kernel_builder(kind):
    assert (Path(iree_kernels.tool_path()) / f"{kind.tool}.py").is_file()
    env = _environment([kind.tool])
    compiler = kernel_compiler(env, kind.suffix)
    assert compiler is not None and compiler.suffix == kind.suffix
    builder = env["BUILDERS"]["Kernel"]
    assert builder.builder.suffix[kind.suffix] == kind.compiles_to
    name, _ = compiler.program(env)
    assert name                          # what a missing-tool message names


def test_the_kernel_builder_picks_the_action_by_the_source_suffix(tmp_path):
    env = _environment(["ptx", "glsl"])
    cu, glsl = tmp_path / "k.cu", tmp_path / "k.glsl"
    cu.write_text("")
    glsl.write_text("")
    ptx = env.Kernel(str(tmp_path / "k.ptx"), str(cu), CUDA_ARCH="sm_86")[0]
    spv = env.Kernel(str(tmp_path / "k.spv"), str(glsl))[0]
    assert "PTX_NVCCCOM" in str(ptx.get_executor()) and "SPIRV_" in str(spv.get_executor())
    executor = ptx.get_executor()
    line = executor.get_build_env().subst("$PTX_NVCCCOM", target=executor.get_all_targets(),
                                          source=executor.get_all_sources())
    assert "-ptx -arch=sm_86" in line         # the module's architecture, given per kernel
    assert [t.name for t in ptx.get_executor().get_all_targets()] == ["k.ptx", "k.ptx.d"]

def test_a_kernel_depends_on_the_version_of_the_program_that_compiles_it(tmp_path):
    env = _environment(["elf_object"])
    env.Replace(ELF_CC="/opt/toolchain/bin/clang-x")
    source = tmp_path / "k.c"
    source.write_text("")
    kernel = env.Kernel(str(tmp_path / "k.o"), str(source))[0]
    versions = versions_reached(kernel)
    assert list(versions) == ["clang-x"]
    assert versions["clang-x"] is tool_version("/opt/toolchain/bin/clang-x")
    assert isinstance(versions["clang-x"], SCons.Node.Python.Value)


def test_versions_are_found_however_deep_and_once_per_program(tmp_path):
    env = _environment(["elf_object"])
    env.Replace(ELF_CC="/opt/toolchain/bin/cc-y")
    objects = []
    for name in ("a", "b"):
        (tmp_path / f"{name}.c").write_text("")
        objects += env.Kernel(str(tmp_path / f"{name}.o"), str(tmp_path / f"{name}.c"))[:1]
    top = env.Command(str(tmp_path / "top"), objects, "cat $SOURCES > $TARGET")[0]
    assert list(versions_reached(top)) == ["cc-y"]
    assert command_program(env, "ELFCOM", [objects[0]], objects[0].sources) == \
        "/opt/toolchain/bin/cc-y"


def test_a_checker_keys_what_it_checks_but_is_not_named_among_the_makers(tmp_path):
    env = _environment(["elf_object"])
    env.Replace(ELF_CC="/opt/toolchain/bin/cc-z")
    (tmp_path / "k.c").write_text("")
    kernel = env.Kernel(str(tmp_path / "k.o"), str(tmp_path / "k.c"))[0]
    checked = env.Command(str(tmp_path / "checked"), kernel, "true")[0]
    env.Depends(checked, tool_version("/opt/toolchain/bin/checker", makes=False))
    assert list(versions_reached(checked)) == ["cc-z"]


def test_no_tool_is_named_as_an_installed_package():
    # SCons loads a tool as sys.modules[its name]: a tool named 'triton' stood in for Triton
    # in the build's process, and torch.export, importing Triton, then failed there.
    import importlib.metadata
    packages = importlib.metadata.packages_distributions()
    tools = {path.stem for path in Path(iree_kernels.tool_path()).glob("*.py")}
    assert "triton" in packages and "SCons" in packages          # the list is the installed one
    assert sorted(tools & set(packages)) == []
