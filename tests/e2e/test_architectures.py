"""GPU architectures: CUDA_ARCH/HIP_ARCH lists build a module each; the hip target without a GPU."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from iree_kernels.core import toolchains
from iree_kernels.ir.targets import TARGETS

needs_nvcc = pytest.mark.skipif(toolchains.nvcc() is None, reason="no nvcc (./setup.sh installs one)")
needs_hip_clang = pytest.mark.skipif(toolchains.hip_clang() is None,
                                     reason="no clang-19 (./setup.sh installs it)")

CUDA = """
[models.ew]
source = "models/ew.mlir"
targets = ["cuda"]

[[substitutions]]
model = "ew"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/ew.cu"
"""
HIP_MODEL = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["hip"]
"""
HIP_WRAPPED = """
[[substitutions]]
model = "saxpy"
target = "hip"
executable = "main_dispatch_0"
file = "kernels/saxpy.hip"
mode = "wrapped"
workgroup_size = [256]
workgroup_count = ["ceildiv(w0, 256)"]
"""


@pytest.fixture
def cuda_project(project):
    project.copy(REPO / "models/elementwise.mlir", "models/ew.mlir")
    project.copy(REPO / "kernels/cuda/elementwise.cu", "kernels/ew.cu")
    project.write("kernels/demo.toml", CUDA)
    return project


@pytest.fixture
def hip_project(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.copy(REPO / "kernels/hip/saxpy_256.hip", "kernels/saxpy.hip")
    return project


def _ptx_target(path) -> str:
    return next(line.split()[1] for line in path.read_text().splitlines()
                if line.startswith(".target"))


@needs_nvcc
def test_each_cuda_architecture_gets_its_module_and_kernel(cuda_project):
    root = cuda_project.root
    build = cuda_project.scons("CUDA_ARCH=sm_80,sm_86")
    assert build.made_modules() == ["build/cuda-sm_80/ew.vmfb", "build/cuda-sm_86/ew.vmfb"]
    for arch in ("sm_80", "sm_86"):
        assert f"--iree-cuda-target={arch}" in cuda_project.read(f"build/cuda-{arch}/ew/options.flags")
        ptx = root / f"build/cuda-{arch}/kernels/ew.ptx"
        assert _ptx_target(ptx) == arch
        assert ptx.read_bytes() in (root / f"build/cuda-{arch}/ew.vmfb").read_bytes()
    assert not (root / "build/cuda").exists()

    # One architecture: build/cuda/ as before, compiled for it.
    cuda_project.scons("CUDA_ARCH=sm_86")
    assert "--iree-cuda-target=sm_86" in cuda_project.read("build/cuda/ew/options.flags")
    assert _ptx_target(root / "build/kernels/ew.ptx") == "sm_86"


@pytest.mark.parametrize("arguments, line", [
    (("CUDA_ARCH=sm_80,sm_90",), "scons: *** CUDA_ARCH=sm_90: IREE has no cuda target 'sm_90'; "
     "IREE 3.12 and 3.13 accept sm_60, sm_61, sm_62, sm_70, sm_72, sm_75, sm_80, sm_86, sm_87, "
     "sm_89, sm_120, sm_121 (iree-compile: missing GPU target in #hal.executable.target)"),
    (("IREE_TARGETS=hip", "HIP_ARCH=gfx1102"), "scons: *** HIP_ARCH=gfx1102: IREE has no hip "
     "target 'gfx1102'; IREE 3.12 and 3.13 accept gfx908, "),
    (("CUDA_ARCH=sm_80 sm_86",), "scons: *** CUDA_ARCH=sm_80 sm_86: 'sm_80 sm_86' is not a cuda "
     "architecture name (like sm_80)"),
])
def test_an_architecture_iree_lacks_is_one_line(cuda_project, arguments, line):
    build = cuda_project.scons(*arguments, expect_ok=False)
    assert build.returncode != 0
    assert line in build.output
    assert len([l for l in build.output.splitlines() if l.startswith("scons: ***")]) == 1
    assert not (cuda_project.root / "build").exists()


def _dumped_source(project, executable: str) -> str:
    """The executable's source as iree-compile dumps it for the hip target (default arch)."""
    dump = project.root / "dump"
    subprocess.run([toolchains.iree_compile(), str(project.root / "models/saxpy.mlir"),
                    *TARGETS["hip"].flags(), "--compile-to=executable-sources",
                    f"--iree-hal-dump-executable-sources-to={dump}", "-o", "/dev/null"],
                   check=True, capture_output=True)
    return (dump / f"module_{executable}.mlir").read_text()


def test_hip_source_substitution_is_compiled_by_iree(hip_project):
    hip_project.write("kernels/demo.toml", HIP_MODEL)
    hip_project.scons()
    plain = (hip_project.root / "build/hip/saxpy.vmfb").read_bytes()
    source = _dumped_source(hip_project, "main_dispatch_0")
    assert "arith.addf" in source
    hip_project.write("kernels/sub.mlir", source.replace("arith.addf", "arith.subf"))
    hip_project.write("kernels/demo.toml", HIP_MODEL + """
[[substitutions]]
model = "saxpy"
target = "hip"
executable = "main_dispatch_0"
file = "kernels/sub.mlir"
""")
    build = hip_project.scons()
    # Relinked (RELINK's default): the kernel compiled alone, its binary put in the module.
    assert build.ran("RELINK") == ["build/hip/saxpy.vmfb"]
    assert build.ran("BINARY") == ["build/hip/saxpy/relink/main_dispatch_0.bin"]
    assert (hip_project.root / "build/hip/saxpy.vmfb").read_bytes() != plain


@needs_hip_clang
def test_wrapped_hip_kernel_is_compiled_per_architecture(hip_project):
    hip_project.write("kernels/demo.toml", HIP_MODEL + HIP_WRAPPED)
    build = hip_project.scons("HIP_ARCH=gfx942,gfx1100")
    assert build.ran("HSACO") == ["build/hip-gfx1100/kernels/saxpy.hsaco",
                                  "build/hip-gfx942/kernels/saxpy.hsaco"]
    for arch in ("gfx942", "gfx1100"):
        hsaco = (hip_project.root / f"build/hip-{arch}/kernels/saxpy.hsaco").read_bytes()
        assert hsaco[:4] == b"\x7fELF" and b"main_dispatch_0_elementwise_D_f32" in hsaco
        assert hsaco in (hip_project.root / f"build/hip-{arch}/saxpy.vmfb").read_bytes()
        wrapper = hip_project.read(f"build/hip-{arch}/saxpy/main_dispatch_0.wrapper.mlir")
        assert "<workgroup_size = [256 : index, 1 : index, 1 : index]>" in wrapper
        assert f'arch = "{arch}"' in wrapper
    # Editing the kernel recompiles it for each architecture, and nothing of IREE's front end.
    hip_project.write("kernels/saxpy.hip", hip_project.read("kernels/saxpy.hip")
                      .replace("2.0f * x[i]", "3.0f * x[i]"))
    again = hip_project.scons("HIP_ARCH=gfx942,gfx1100")
    assert len(again.ran("HSACO")) == 2 and again.ran("FRONTEND") == []


@needs_hip_clang
def test_hip_object_substitution(hip_project):
    hip_project.write("kernels/demo.toml", HIP_MODEL + HIP_WRAPPED.replace(
        'mode = "wrapped"\nworkgroup_size = [256]\nworkgroup_count = ["ceildiv(w0, 256)"]\n',
        'mode = "object"\n'))
    hip_project.scons()
    assert ("--iree-hal-substitute-executable-object=main_dispatch_0=build/kernels/saxpy.hsaco"
            in hip_project.read("build/hip/saxpy/substitutions.flags"))
    hsaco = (hip_project.root / "build/kernels/saxpy.hsaco").read_bytes()
    assert hsaco in (hip_project.root / "build/hip/saxpy.vmfb").read_bytes()


def test_missing_hip_clang_says_how_to_install_it(hip_project, monkeypatch):
    monkeypatch.setenv("HIP_CLANG", "/nonexistent/clang-19")
    hip_project.write("kernels/demo.toml", HIP_MODEL + HIP_WRAPPED)
    build = hip_project.scons(expect_ok=False)
    assert build.returncode != 0
    assert "clang-19 is not installed: apt-get install clang-19 lld-19" in build.output


@needs_hip_clang
def test_a_code_object_for_another_architecture_is_refused(hip_project):
    subprocess.run([toolchains.hip_clang(), "-x", "hip", "--offload-arch=gfx1100",
                    "--offload-device-only", "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib",
                    "-include", str(REPO / "site_scons/iree_kernels/data/clang_hip_prelude.h"),
                    str(hip_project.root / "kernels/saxpy.hip"), "-o",
                    str(hip_project.root / "kernels/saxpy.hsaco")], check=True, timeout=120)
    hip_project.write("kernels/demo.toml", HIP_MODEL + HIP_WRAPPED.replace(".hip", ".hsaco"))
    assert hip_project.scons("HIP_ARCH=gfx1100").made_modules() == ["build/hip/saxpy.vmfb"]
    build = hip_project.scons("HIP_ARCH=gfx942", expect_ok=False)
    assert build.returncode != 0
    assert ("scons: *** [build/hip/saxpy/substitutions.flags] kernels/demo.toml:6: "
            "[[substitutions]] #1 (executable 'main_dispatch_0' of saxpy/hip): kernel "
            "kernels/saxpy.hsaco: the code object is for gfx1100, the module for gfx942 "
            "(HIP_ARCH); compile it with --offload-arch=gfx942") in build.output
