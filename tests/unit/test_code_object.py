"""Reading AMD GPU code objects and checking them against the executable they replace."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Binding, Executable, Export, Layout
from iree_kernels.binaries.code_object import MACHINES, check_hsaco, read_hsaco

CLANG = toolchains.hip_clang()
needs_clang = pytest.mark.skipif(CLANG is None, reason="no clang-19 (./setup.sh installs it)")
PRELUDE = Path(__file__).parents[2] / "site_scons/iree_kernels/data/clang_hip_prelude.h"
KERNEL = 'extern "C" __global__ void {name}(float* out) {{ out[threadIdx.x] = blockIdx.x; }}\n'
EXPORT = "main_dispatch_0_elementwise_4_f32"


def executable() -> Executable:
    layout = Layout((Binding(0, "storage_buffer", False),), 0)
    return Executable("main_dispatch_0", "rocm", "rocm-hsaco-fb",
                      (Export(EXPORT, 0, layout, (64, 1, 1)),))


def compiled(tmp_path: Path, arch: str, source: str) -> bytes:
    (tmp_path / "k.hip").write_text(source)
    subprocess.run([CLANG, "-x", "hip", f"--offload-arch={arch}", "--offload-device-only",
                    "--no-gpu-bundle-output", "-nogpuinc", "-nogpulib", "-include", str(PRELUDE),
                    "-O3", str(tmp_path / "k.hip"), "-o", str(tmp_path / "k.hsaco")], check=True,
                   timeout=120)
    return (tmp_path / "k.hsaco").read_bytes()


@needs_clang
@pytest.mark.parametrize("arch", sorted(set(MACHINES.values()) - {"gfx950"}))  # clang-19 lacks it
def test_architecture_and_kernel_are_read(tmp_path, arch):
    code = read_hsaco(compiled(tmp_path, arch, KERNEL.format(name=EXPORT)), "k.hsaco")
    assert (code.arch, code.kernels) == (arch, (EXPORT,))
    check_hsaco(code, "k.hsaco", executable(), arch)


@needs_clang
def test_another_architecture_is_refused(tmp_path):
    code = read_hsaco(compiled(tmp_path, "gfx1100", KERNEL.format(name=EXPORT)), "k.hsaco")
    with pytest.raises(UserError, match=r"k.hsaco: the code object is for gfx1100, the module "
                                        r"for gfx942 \(HIP_ARCH\); compile it with "
                                        r"--offload-arch=gfx942"):
        check_hsaco(code, "k.hsaco", executable(), "gfx942")


@needs_clang
def test_a_kernel_named_otherwise_is_refused(tmp_path):
    code = read_hsaco(compiled(tmp_path, "gfx942", KERNEL.format(name="saxpy")), "k.hsaco")
    with pytest.raises(UserError, match=f"no kernel named '{EXPORT}' .*; its kernels: saxpy$"):
        check_hsaco(code, "k.hsaco", executable(), "gfx942")


@needs_clang
def test_a_mangled_kernel_gets_the_extern_c_hint(tmp_path):
    source = KERNEL.format(name=EXPORT).replace('extern "C" ', "")
    code = read_hsaco(compiled(tmp_path, "gfx942", source), "k.hsaco")
    with pytest.raises(UserError, match=r"its kernels: _Z.*declare the kernel extern \"C\""):
        check_hsaco(code, "k.hsaco", executable(), "gfx942")


@pytest.mark.parametrize("data, message", [
    (b"", "not a 64-bit little-endian ELF file"),
    (b"\x7fELF\x01\x01" + bytes(58), "not a 64-bit little-endian ELF file"),
    (b"\x7fELF\x02\x01" + bytes(12) + (62).to_bytes(2, "little") + bytes(44),
     "ELF machine 62, not AMDGPU (224)"),
    (b"\x7fELF\x02\x01" + bytes(12) + (224).to_bytes(2, "little") + bytes(20)
     + (1 << 40).to_bytes(8, "little") + bytes(10) + (64).to_bytes(2, "little")
     + (1).to_bytes(2, "little") + bytes(2), "truncated"),
])
def test_what_is_not_a_code_object_is_refused(data, message):
    with pytest.raises(UserError, match=re.escape(message)):
        read_hsaco(data, "k.hsaco")
