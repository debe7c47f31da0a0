"""Wrapped substitutions: generated hal.executables with the manifest's launch shape."""
from __future__ import annotations

import pytest

from conftest import REPO, Project, made_once, run_module
from iree_kernels.check import runtime
from iree_kernels.core import toolchains

needs_clang = pytest.mark.skipif(toolchains.on_path("clang") is None, reason="no clang")
needs_vulkan = pytest.mark.skipif(
    toolchains.on_path("glslangValidator") is None or
    "vulkan" not in runtime.available_drivers(toolchains.iree_tool("iree-run-module")),
    reason="no glslangValidator or no Vulkan device")

C_KERNEL = (REPO / "kernels/cpu/saxpy.c").read_text()
MANIFEST = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu", "vulkan", "cuda"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/saxpy.c"
workgroup_count = ["ceildiv(w0, 1024)"]
"""
VULKAN = """
[[substitutions]]
model = "saxpy"
target = "vulkan"
executable = "main_dispatch_0"
file = "kernels/saxpy.glsl"
mode = "wrapped"
workgroup_size = [128]
workgroup_count = ["ceildiv(w0, 128)"]
"""
CUDA = """
[[substitutions]]
model = "saxpy"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/saxpy.cu"
mode = "wrapped"
workgroup_size = [256]
workgroup_count = ["ceildiv(w0, 256)"]
"""
N = 3000
INPUTS = [f"{N}xf32=3", f"{N}xf32=1"]


@pytest.fixture
def wrapped(project):
    return wrapped_repo(project)


@pytest.fixture
def wrapped_on_llvm_cpu(tmp_path_factory, tmp_path):
    """wrapped_repo() built for llvm-cpu: built once per run, copied for each test."""
    def build(folder):
        wrapped_repo(Project(folder)).scons("IREE_TARGETS=llvm-cpu")
    return Project.copy_of(made_once(tmp_path_factory, "wrapped-on-llvm-cpu", build),
                           tmp_path / "repo")


def wrapped_repo(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.write("kernels/saxpy.h", "#define SCALE 2.0f\n")
    # x - y * SCALE instead of 2 * x + y: the numbers show the C function ran.
    project.write("kernels/saxpy.c", C_KERNEL.replace("#include <stdint.h>",
                                                       '#include <stdint.h>\n#include "saxpy.h"')
                  .replace("2.0f * x[i] + y[i]", "x[i] - y[i] * SCALE"))
    project.copy(REPO / "kernels/vulkan/saxpy_128.glsl", "kernels/saxpy.glsl")
    project.copy(REPO / "kernels/cuda/saxpy_256.cu", "kernels/saxpy.cu")
    project.write("kernels/demo.toml", MANIFEST)
    return project


def values(output: str) -> list[float]:
    return [float(v) for v in output.split("=", 1)[1].split()]


@needs_clang
def test_c_kernel_runs_with_a_workload_dependent_count(wrapped):
    build = wrapped.scons("IREE_TARGETS=llvm-cpu")
    assert build.ran("CC") == ["kernels/saxpy.c"]
    wrapper = wrapped.read("build/llvm-cpu/saxpy/main_dispatch_0.wrapper.mlir")
    assert "%v1 = arith.ceildivui %w0, %c1024 : index" in wrapper
    assert 'objects([#hal.executable.object<{path = "build/kernels/saxpy.o"}>])' in wrapper
    assert "func.func private @saxpy(" in wrapper
    out = values(run_module(wrapped.root / "build/llvm-cpu/saxpy.vmfb", "local-sync", "main", INPUTS))
    assert out == [1.0] * N                       # every one of the 3 workgroups ran


@needs_clang
def test_the_manifests_count_is_the_one_launched(wrapped):
    wrapped.write("kernels/demo.toml", MANIFEST.replace('["ceildiv(w0, 1024)"]', '[1]'))
    wrapped.scons("IREE_TARGETS=llvm-cpu")
    out = values(run_module(wrapped.root / "build/llvm-cpu/saxpy.vmfb", "local-sync", "main", INPUTS))
    assert out[:1024] == [1.0] * 1024             # one workgroup: only the first slice is written
    assert out[1024:] != [1.0] * (N - 1024)


@needs_clang
def test_editing_a_c_header_rebuilds_the_object_and_module(wrapped_on_llvm_cpu):
    wrapped = wrapped_on_llvm_cpu
    wrapped.write("kernels/saxpy.h", "#define SCALE 3.0f\n")
    rebuild = wrapped.scons("IREE_TARGETS=llvm-cpu")
    assert rebuild.ran("CC") == ["kernels/saxpy.c"]
    assert rebuild.ran("RELINK") == ["build/llvm-cpu/saxpy.vmfb"] and rebuild.ran("IREE") == []
    out = values(run_module(wrapped.root / "build/llvm-cpu/saxpy.vmfb", "local-sync", "main", INPUTS))
    assert out == [0.0] * N


@needs_vulkan
def test_glsl_kernel_with_its_own_workgroup_size_on_lavapipe(wrapped):
    wrapped.write("kernels/demo.toml", MANIFEST + VULKAN)
    wrapped.scons("IREE_TARGETS=vulkan")
    wrapper = wrapped.read("build/vulkan/saxpy/main_dispatch_0.wrapper.mlir")
    assert "<workgroup_size = [128 : index, 1 : index, 1 : index]>" in wrapper
    out = values(run_module(wrapped.root / "build/vulkan/saxpy.vmfb", "vulkan", "main", INPUTS))
    assert out == [7.0] * N


@needs_vulkan
def test_workgroup_size_must_match_the_shaders_local_size(wrapped):
    wrapped.write("kernels/demo.toml", MANIFEST + VULKAN.replace("[128]", "[64]"))
    build = wrapped.scons("IREE_TARGETS=vulkan", expect_ok=False)
    assert build.returncode != 0
    assert ("the shader's local_size is [128, 1, 1], the manifest's workgroup_size is "
            "[64, 1, 1]; make them equal") in build.output


@pytest.mark.skipif(toolchains.nvcc() is None, reason="no nvcc")
def test_cuda_kernel_gets_a_wrapper_with_its_block_size(wrapped):
    wrapped.write("kernels/demo.toml", MANIFEST + CUDA)
    wrapped.scons("IREE_TARGETS=cuda")
    wrapper = wrapped.read("build/cuda/saxpy/main_dispatch_0.wrapper.mlir")
    assert "<workgroup_size = [256 : index, 1 : index, 1 : index]>" in wrapper
    assert "builtin.module" not in wrapper
    assert ("--iree-hal-substitute-executable-source=main_dispatch_0="
            "build/cuda/saxpy/main_dispatch_0.wrapper.mlir") in \
        wrapped.read("build/cuda/saxpy/substitutions.flags")
    ptx = (wrapped.root / "build/kernels/saxpy.ptx").read_bytes()
    assert ptx in (wrapped.root / "build/cuda/saxpy.vmfb").read_bytes()


@needs_clang
@pytest.mark.parametrize("count, message", [
    ('["ceildiv(n, 256)"]', "field 'workgroup_count': unknown name 'n'; the workload values are "
                            "named w0, w1, ..."),
    ('["w3"]', "field 'workgroup_count': unknown name 'w3'; the workload values are w0, w1 "
               "(executable 'main_dispatch_0' takes 2 workload values)"),
])
def test_wrong_count_names_the_entry_and_field(wrapped, count, message):
    wrapped.write("kernels/demo.toml", MANIFEST.replace('["ceildiv(w0, 1024)"]', count))
    build = wrapped.scons("IREE_TARGETS=llvm-cpu", expect_ok=False)
    assert build.returncode != 0
    assert "kernels/demo.toml:11: [[substitutions]] #1 (executable 'main_dispatch_0' of " \
           "saxpy/llvm-cpu): " + message in build.output
    assert not (wrapped.root / "build/llvm-cpu/saxpy.vmfb").exists()


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.replace('["ceildiv(w0, 1024)"]', '["w0 +"]'),
     "field 'workgroup_count': 'w0 +' is not an expression"),
    (lambda m: m.replace('["ceildiv(w0, 1024)"]', '["w0 ** 2"]'),
     "field 'workgroup_count': 'w0 ** 2' is not allowed"),
    (lambda m: m.replace('workgroup_count = ["ceildiv(w0, 1024)"]\n', ''),
     "field 'workgroup_count': a wrapped substitution needs a workgroup_count"),
    (lambda m: m + 'workgroup_size = [64]\n',
     "field 'workgroup_size': llvm-cpu runs one invocation per workgroup"),
    (lambda m: m + 'mode = "object"\n',
     "field 'mode': a C kernel cannot be substituted in object mode: a native object can only "
     "be linked by a generated wrapper"),
    (lambda m: m + 'function = "2bad"\n',
     "field 'function': '2bad' is not a C function name"),
    (lambda m: m + CUDA.replace("workgroup_size = [256]\n", ""),
     "field 'workgroup_size': a wrapped GPU kernel needs workgroup_size"),
])
def test_manifest_errors_of_wrapped_entries(wrapped, edit, message):
    wrapped.write("kernels/demo.toml", edit(MANIFEST))
    build = wrapped.scons(expect_ok=False)
    assert build.returncode == 2
    assert message in build.output


@needs_clang
def test_an_unrelated_manifest_edit_recompiles_nothing(wrapped_on_llvm_cpu):
    wrapped = wrapped_on_llvm_cpu
    wrapped.write("kernels/demo.toml", "# a comment moves every line\n\n" + MANIFEST)
    rebuild = wrapped.scons("IREE_TARGETS=llvm-cpu")
    assert rebuild.ran("IREE") == [] and rebuild.ran("CC") == []
