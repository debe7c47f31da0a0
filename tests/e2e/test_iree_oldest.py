"""The oldest IREE release supported (pyproject.toml's lower bound): a small repo built and checked with it.

setup.sh installs it into .venv/iree-oldest (requirements-iree-oldest.txt); the
rest of the suite runs with the newest (requirements.txt). One repo with a
wrapped C kernel (llvm-cpu), a wrapped GLSL shader (vulkan, run on lavapipe), an
object-mode CUDA kernel and a wrapped HIP kernel, built and checked by that
venv's scons, iree-compile and iree-run-module.
"""
from __future__ import annotations

import os

import pytest

from conftest import REPO
from harness import scons
from iree_kernels.check import runtime
from iree_kernels.core import toolchains

OLDEST = REPO / ".venv/iree-oldest"
VERSION = next(line.split("==")[1] for line in (REPO / "requirements-iree-oldest.txt")
               .read_text().splitlines() if line.startswith("iree-base-compiler=="))

pytestmark = pytest.mark.skipif(not (OLDEST / "bin/scons").is_file(),
                                reason="no .venv/iree-oldest (./setup.sh installs it)")

MANIFEST = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu", "vulkan", "cuda", "hip"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/saxpy.c"
workgroup_count = ["ceildiv(w0, 1024)"]

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
"""
HIP = """
[[substitutions]]
model = "saxpy"
target = "hip"
executable = "main_dispatch_0"
file = "kernels/saxpy.hip"
mode = "wrapped"
workgroup_size = [256]
workgroup_count = ["ceildiv(w0, 256)"]
"""
EXPECTED = """
[[case]]
function = "main"
inputs = ["3000xf32=3", "3000xf32=1"]
outputs = ["3000xf32=7"]
"""


def _scons(root, *arguments):
    """scons of the oldest IREE's venv, its tools found first."""
    environment = {"PATH": f"{OLDEST / 'bin'}:{os.environ['PATH']}", "VIRTUAL_ENV": str(OLDEST),
                   "PYTHONDONTWRITEBYTECODE": "1", "IREE_COMPILE": None}     # its own
    if toolchains.nvcc():
        environment["NVCC"] = toolchains.nvcc()      # the main venv's wheel
    # Through its python: the script's #! names where the venv was made, maybe another checkout.
    return scons(root, *arguments, program=[OLDEST / "bin/python", OLDEST / "bin/scons"],
                 env=environment)


def test_the_oldest_iree_builds_and_checks_a_repo(project):
    (compiler,) = OLDEST.glob("lib/python*/site-packages/iree/compiler/_mlir_libs/iree-compile")
    assert f"IREE compiler version {VERSION}" in toolchains.version(str(compiler))
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.write("models/saxpy.expected.toml", EXPECTED)
    project.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.c")
    project.copy(REPO / "kernels/vulkan/saxpy_128.glsl", "kernels/saxpy.glsl")
    project.copy(REPO / "kernels/cuda/saxpy_256.cu", "kernels/saxpy.cu")
    project.copy(REPO / "kernels/hip/saxpy_256.hip", "kernels/saxpy.hip")
    manifest = MANIFEST + (CUDA if toolchains.nvcc() else "") + (HIP if toolchains.hip_clang() else "")
    project.write("kernels/demo.toml", manifest)

    build = _scons(project.root, "modules", "check")
    assert build.ok, build.failure()
    assert "1 case(s) of models/saxpy.expected.toml matched on local-sync" in build.stdout
    for target in ("llvm-cpu", "vulkan", "cuda", "hip"):
        assert (project.root / f"build/{target}/saxpy.vmfb").is_file()
    # The wrapper is written in the older IREE's syntax.
    assert "} attributes {workgroup_size = [128 : index, 1 : index, 1 : index]}" in \
        project.read("build/vulkan/saxpy/main_dispatch_0.wrapper.mlir")
    if "vulkan" in runtime.available_drivers(toolchains.iree_tool("iree-run-module")):
        assert "1 case(s) of models/saxpy.expected.toml matched on vulkan" in build.stdout
