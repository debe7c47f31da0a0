"""Projects the RELINK tests build (tests/e2e/test_relink.py, tests/gpu/test_relink_on_gpu.py),
and the module iree-compile makes of them itself."""
from __future__ import annotations

import io
import subprocess
import zipfile

from conftest import REPO
from iree_kernels.module import relink
from iree_kernels.core import toolchains
from iree_kernels.ir import vmfb

SAXPY_KERNELS = {"vulkan": ("kernels/vulkan/saxpy_128.glsl", 128),
                 "cuda": ("kernels/cuda/saxpy_256.cu", 256)}


def iree_compiles_own(project, out, target: str = "llvm-cpu", model: str = "mlp",
                      by_name: bool = False) -> bytes:
    """iree-compile of the model itself, its own substitution flags, executables unlinked; from
    standard input, or ``by_name`` as the build names it (GPU binaries record the file's name in
    their debug information)."""
    here = project.root / f"build/{target}/{model}"
    source = f"models/{model}.mlir"
    with open(project.root / source, "rb") as model:
        subprocess.run([toolchains.iree_compile(), source if by_name else "-",
                        f"@{here}/options.flags", f"@{here}/substitutions.flags", relink.UNLINKED,
                        "-o", str(out)],
                       stdin=model, cwd=project.root, check=True, capture_output=True)
    return out.read_bytes()


# saxpy's main_dispatch_0 on CUDA for any launch shape (object mode keeps IREE's): a grid-stride loop.
SAXPY_ANY_LAUNCH = """extern "C" __global__ void main_dispatch_0_elementwise_D_f32(
    const float* __restrict__ x, const float* __restrict__ y, float* __restrict__ out,
    unsigned int n_lo, unsigned int n_hi, unsigned int out_n_lo, unsigned int out_n_hi) {
  unsigned long long n = (unsigned long long)n_hi << 32 | n_lo;
  for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x)
    out[i] = 2.0f * x[i] + y[i];
}
"""
SAXPY_OBJECT = "kernels/cuda/saxpy_any_launch.cu"


def assert_same_module(ours: bytes, theirs: bytes, debug_lines: bool = False) -> None:
    """A relinked module is iree-compile's: the same zip entries in the same order, each byte for
    byte, but for where the segments after a replaced binary of another size lie (the relink
    moves them by a multiple of 64, IREE aligns each to its own alignment): the FlatBuffer's
    offsets to them. ``debug_lines``: a segment may also differ in one 4-byte field, the source
    line its export's debug information records (CUDA objects)."""
    a, b = (zipfile.ZipFile(io.BytesIO(m)) for m in (ours, theirs))
    assert a.testzip() is None and a.namelist() == b.namelist()
    layout = vmfb._Layout(ours)
    fb = layout.entries[0]
    offsets = {at - fb.data + k for s in layout.segments for at in [s.offset_field]
               for k in range(8)}
    for name in a.namelist():
        x, y = a.read(name), b.read(name)
        assert len(x) == len(y), name
        apart = [i for i in range(len(x)) if x[i] != y[i]
                 and not (name == vmfb.FLATBUFFER_ENTRY and i in offsets)]
        if debug_lines and name != vmfb.FLATBUFFER_ENTRY:
            assert not apart or apart[-1] - apart[0] < 4, (name, apart)
        else:
            assert not apart, (name, apart[:8])


def saxpy_wrapped(project, targets: list[str]) -> None:
    """models/saxpy.mlir with the demo's wrapped GPU kernel on each of ``targets``."""
    entries = ""
    for target in targets:
        kernel, size = SAXPY_KERNELS[target]
        project.copy(REPO / kernel, kernel)
        entries += _entry(target, kernel, "wrapped",
                          f'workgroup_size = [{size}]\nworkgroup_count = ["ceildiv(w0, {size})"]\n')
    _saxpy(project, targets, entries)


def saxpy_object_on_cuda(project) -> None:
    """models/saxpy.mlir with SAXPY_ANY_LAUNCH substituted in object mode on CUDA."""
    project.write(SAXPY_OBJECT, SAXPY_ANY_LAUNCH)
    _saxpy(project, ["cuda"], _entry("cuda", SAXPY_OBJECT, "object"))


def _entry(target: str, kernel: str, mode: str, launch: str = "") -> str:
    return (f'\n[[substitutions]]\nmodel = "saxpy"\ntarget = "{target}"\n'
            f'executable = "main_dispatch_0"\nfile = "{kernel}"\nmode = "{mode}"\n{launch}')


def _saxpy(project, targets: list[str], entries: str) -> None:
    listed = ", ".join(f'"{t}"' for t in targets)
    project.write("kernels/saxpy.toml",
                  f'[models.saxpy]\nsource = "models/saxpy.mlir"\ntargets = [{listed}]\n{entries}')
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
