"""Header dependencies from compiler depfiles: an include directory given only through a flag
variable is tracked, a first build is followed by one that runs nothing, and a header edit
recompiles exactly the kernels that read it."""
from __future__ import annotations

import pytest

from conftest import REPO
from iree_kernels.core import toolchains

# The demo kernels, their grid helper taken from a folder given only by a flag.
CUDA_KERNEL = (REPO / "kernels/cuda/elementwise.cu").read_text().replace(
    '#include "iree_kernels/grid.cuh"', '#include "grid.cuh"')
GLSL_SHADER = (REPO / "kernels/vulkan/elementwise.glsl").read_text().replace(
    '#include "iree_kernels/grid.glsl"', '#include "grid.glsl"')
HEADERS = REPO / "site_scons/iree_kernels/data/include/iree_kernels"


def manifest(kernels: dict[str, tuple[str, str]]) -> str:
    """``kernels``: model name -> (target, kernel file); every model is models/ew.mlir."""
    text = ""
    for model, (target, file) in kernels.items():
        text += f'[models.{model}]\nsource = "models/ew.mlir"\ntargets = ["{target}"]\n\n'
    for model, (target, file) in kernels.items():
        text += (f'[[substitutions]]\nmodel = "{model}"\ntarget = "{target}"\n'
                 f'executable = "main_dispatch_0"\nfile = "{file}"\n\n')
    return text


@pytest.mark.skipif(toolchains.nvcc() is None, reason="no nvcc (./setup.sh installs one)")
@pytest.mark.parametrize("compiler, flags", [("nvcc", "NVCCFLAGS"), ("clang", "CLANG_CUDAFLAGS")])
def test_cuda_header_reached_only_through_a_flag(project, compiler, flags):
    if compiler == "clang" and not toolchains.on_path("clang"):
        pytest.skip("no clang")
    project.copy(REPO / "models/elementwise.mlir", "models/ew.mlir")
    project.copy(HEADERS / "grid.cuh", "third_party/inc/grid.cuh")
    project.write("kernels/uses.cu", CUDA_KERNEL)                         # includes grid.cuh
    project.write("kernels/other.cu", CUDA_KERNEL.replace(
        '#include "grid.cuh"', '#define FOR_EACH_THREAD(i, n) '
        'for (unsigned int i = threadIdx.x; i < (n); i += blockDim.x)'))
    project.write("kernels/demo.toml", manifest({"uses": ("cuda", "kernels/uses.cu"),
                                                 "other": ("cuda", "kernels/other.cu")}))
    args = (f"CUDA_COMPILER={compiler}",)
    project.write("SConstruct", project.read("SConstruct").replace(
        'tools=["iree_project"])', f'tools=["iree_project"])\nenv.Append({flags}=["-Ithird_party/inc"])'))
    first = project.scons(*args)
    assert first.ran("PTX") == ["kernels/other.cu", "kernels/uses.cu"]
    assert "third_party/inc/grid.cuh" in project.read("build/kernels/uses.ptx.d")
    assert project.scons(*args).steps == []
    header = project.root / "third_party/inc/grid.cuh"
    header.write_text(header.read_text().replace("i < (n)", "i < (n) && true"))
    rebuild = project.scons(*args, "--debug=explain")
    assert rebuild.ran("PTX") == ["kernels/uses.cu"]
    # The header, and nothing else (a tool's version recorded by content read as changed).
    assert "rebuilding `build/kernels/uses.ptx' because `third_party/inc/grid.cuh' changed" \
        in rebuild.stdout
    assert "is no longer a dependency" not in rebuild.stdout
    assert "build/cuda/other.vmfb" not in rebuild.ran("IREE")
    assert project.scons(*args).steps == []


@pytest.mark.skipif(toolchains.on_path("glslangValidator") is None, reason="no glslangValidator")
@pytest.mark.parametrize("compiler, flags", [("glslang", "GLSLANGFLAGS"), ("glslc", "GLSLCFLAGS")])
def test_glsl_include_reached_only_through_a_flag(project, compiler, flags):
    if not toolchains.on_path("glslc" if compiler == "glslc" else "glslangValidator"):
        pytest.skip(f"no {compiler}")
    project.copy(REPO / "models/elementwise.mlir", "models/ew.mlir")
    project.copy(HEADERS / "grid.glsl", "shaders/include/grid.glsl")
    project.write("kernels/uses.glsl", GLSL_SHADER)
    project.write("kernels/other.glsl", GLSL_SHADER.replace(
        '#include "grid.glsl"', '#define FOR_EACH_INVOCATION(i, n) '
        'for (uint i = gl_LocalInvocationID.x; i < (n); i += 64)'))
    project.write("kernels/demo.toml", manifest({"uses": ("vulkan", "kernels/uses.glsl"),
                                                 "other": ("vulkan", "kernels/other.glsl")}))
    project.write("SConstruct", project.read("SConstruct").replace(
        'tools=["iree_project"])',
        f'tools=["iree_project"])\nenv.Append({flags}=["-Ishaders/include"])'))
    args = (f"GLSL_COMPILER={compiler}",)
    project.scons(*args)
    assert project.scons(*args).steps == []
    include = project.root / "shaders/include/grid.glsl"
    include.write_text(include.read_text().replace("i < (n);", "i < (n) && i < 0x7fffffffu;"))
    rebuild = project.scons(*args)
    assert rebuild.ran("SPIRV") == ["kernels/uses.glsl"]
    # Relinked: the module is the unlinked one with the shader's binary, nothing compiled again.
    assert rebuild.ran("RELINK") == ["build/vulkan/uses.vmfb"] and rebuild.ran("IREE") == []


@pytest.mark.skipif(toolchains.on_path("clang") is None, reason="no clang")
def test_c_header_reached_through_a_flag_and_a_header_that_moves(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    kernel = (REPO / "kernels/cpu/saxpy.c").read_text()
    project.write("kernels/saxpy.c", kernel.replace(
        "#include <stdint.h>", '#include <stdint.h>\n#include "scale.h"').replace(
        "2.0f * x[i]", "SCALE * x[i]"))
    project.write("vendor/a/scale.h", "#define SCALE 2.0f\n")
    project.write("vendor/b/scale.h", "#define SCALE 3.0f\n")
    project.write("kernels/demo.toml", (
        '[models.saxpy]\nsource = "models/saxpy.mlir"\ntargets = ["llvm-cpu"]\n\n'
        '[[substitutions]]\nmodel = "saxpy"\ntarget = "llvm-cpu"\nexecutable = "main_dispatch_0"\n'
        'file = "kernels/saxpy.c"\nworkgroup_count = ["ceildiv(w0, 1024)"]\n'))
    project.write("SConstruct", project.read("SConstruct").replace(
        'tools=["iree_project"])',
        'tools=["iree_project"])\nenv.Append(ELF_CFLAGS=["-Ivendor/a", "-Ivendor/b"])'))
    project.scons()
    assert project.scons().steps == []
    project.write("vendor/b/scale.h", "#define SCALE 4.0f\n")     # not the one read: nothing runs
    assert project.scons().steps == []
    (project.root / "vendor/a/scale.h").unlink()                   # now vendor/b's is read
    rebuild = project.scons()
    assert rebuild.ran("CC") == ["kernels/saxpy.c"]
    assert "vendor/b/scale.h" in project.read("build/kernels/saxpy.o.d")
    assert project.scons().steps == []
