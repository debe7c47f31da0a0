"""CUDA kernels without a GPU: .cu -> .ptx, checked against the executable, compiled into modules.

Running them is tests/gpu/test_cuda_on_gpu.py.
"""
from __future__ import annotations

import pytest

from conftest import REPO
from iree_kernels.core import toolchains

pytestmark = pytest.mark.skipif(toolchains.nvcc() is None, reason="no nvcc (./setup.sh installs one)")

KERNEL = (REPO / "kernels/cuda/elementwise.cu").read_text()
MANIFEST = """
[models.ew]
source = "models/ew.mlir"
targets = ["cuda"]

[models.mlp]
source = "models/mlp.mlir"
targets = ["cuda"]

[[substitutions]]
model = "ew"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/ew.cu"

[[substitutions]]
model = "mlp"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/matmul.cu"
"""


@pytest.fixture
def cuda_project(project):
    project.copy(REPO / "models/elementwise.mlir", "models/ew.mlir")
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    # A header of the project's own beside the kernel; matmul.cu takes the package's.
    project.copy(REPO / "site_scons/iree_kernels/data/include/iree_kernels/grid.cuh", "kernels/grid.cuh")
    project.write("kernels/ew.cu", KERNEL.replace('"iree_kernels/grid.cuh"', '"grid.cuh"'))
    project.write("kernels/matmul.cu", (REPO / "kernels/cuda/mlp_matmul.cu").read_text()
                  .replace('#include "iree_kernels/grid.cuh"', '#define FOR_EACH_THREAD(i, n) '
                           'for (unsigned int i = threadIdx.x; i < (n); i += blockDim.x)'))
    project.write("kernels/demo.toml", MANIFEST)
    return project


def test_ptx_is_built_checked_and_embedded(cuda_project):
    build = cuda_project.scons()
    assert build.ran("PTX") == ["kernels/ew.cu", "kernels/matmul.cu"]
    ptx = (cuda_project.root / "build/kernels/ew.ptx").read_bytes()
    assert b".entry main_dispatch_0_elementwise_D_f32(" in ptx
    assert ptx in (cuda_project.root / "build/cuda/ew.vmfb").read_bytes()
    assert ("--iree-hal-substitute-executable-object=main_dispatch_0=build/kernels/ew.ptx"
            in cuda_project.read("build/cuda/ew/substitutions.flags"))
    assert '"layout": "3 bindings [0:ro, 1:ro, 2:rw], 4 push constants"' in \
        cuda_project.read("build/cuda/ew/substitutions.json")


def test_editing_a_header_rebuilds_only_its_dependants(cuda_project):
    cuda_project.scons()
    assert cuda_project.scons().steps == []
    header = cuda_project.root / "kernels/grid.cuh"
    header.write_text(header.read_text() + "// edited\n")
    rebuild = cuda_project.scons()
    assert rebuild.ran("PTX") == ["kernels/ew.cu"]
    # nvcc output does not change for a comment, so the module is left alone ...
    assert rebuild.ran("IREE") == []
    header.write_text(header.read_text().replace("i < (n)", "i < (n) && true"))
    rebuild = cuda_project.scons()
    assert rebuild.ran("PTX") == ["kernels/ew.cu"]
    # ... and whether the PTX changed or not, the other model is never rebuilt.
    assert "build/cuda/mlp.vmfb" not in rebuild.ran("IREE")


def test_clang_compiles_the_same_kernels(cuda_project):
    build = cuda_project.scons("CUDA_COMPILER=clang", "VERBOSE=1")
    assert "--cuda-device-only" in build.stdout
    assert b"main_dispatch_0_elementwise_D_f32" in \
        (cuda_project.root / "build/cuda/ew.vmfb").read_bytes()


@pytest.mark.parametrize("edit, message", [
    (lambda k: k.replace("main_dispatch_0_elementwise_D_f32", "main_dispatch_0_elementwise"),
     "kernels/demo.toml:10: [[substitutions]] #1 (executable 'main_dispatch_0' of ew/cuda): "
     "kernel kernels/ew.cu (compiled to build/kernels/ew.ptx): executable 'main_dispatch_0': "
     "the PTX has no .entry named 'main_dispatch_0_elementwise_D_f32'"),
    (lambda k: k.replace('extern "C" ', ""),
     "declare the kernel extern \"C\" to keep its name"),
    (lambda k: k.replace(", unsigned int out_n_lo, unsigned int out_n_hi", ""),
     "kernel 'main_dispatch_0_elementwise_D_f32' has 5 parameters, expected 7 "
     "(3 bindings + 4 push constants)"),
    (lambda k: k.replace("unsigned int n_lo,", "unsigned long long n_lo,"),
     "parameter 4 (c0) is .u64, expected a 32-bit push constant"),
])
def test_kernel_that_does_not_fit_is_refused(cuda_project, edit, message):
    cuda_project.write("kernels/ew.cu", edit(KERNEL))
    build = cuda_project.scons(expect_ok=False)
    assert build.returncode != 0
    assert message in build.output
    assert "Traceback" not in build.output
    assert not (cuda_project.root / "build/cuda/ew.vmfb").exists()
    assert not (cuda_project.root / "build/cuda/ew/substitutions.flags").exists()


def test_compile_error_names_file_and_line(cuda_project):
    cuda_project.write("kernels/ew.cu", KERNEL.replace("out[i] = a[i]", "out[i] = undefined_name[i]"))
    build = cuda_project.scons(expect_ok=False)
    assert build.returncode != 0
    line = next(n for n, text in enumerate(KERNEL.splitlines(), 1) if "out[i] = a[i]" in text)
    assert f'kernels/ew.cu({line}): error: identifier "undefined_name" is undefined' in build.output
    assert not (cuda_project.root / "build/kernels/ew.ptx").exists()


def test_ptx_newer_than_the_driver_loads_is_refused(cuda_project):
    build = cuda_project.scons("PTX_ISA_VERSION=8.5", expect_ok=False)
    assert build.returncode != 0
    assert "build/kernels/ew.ptx:" in build.output
    assert "PTX ISA version 9.0 is newer than 8.5" in build.output
