"""Projects the RELINK tests build (tests/e2e/test_relink.py, tests/gpu/test_relink_on_gpu.py),
and the module iree-compile makes of them itself."""
from __future__ import annotations

import subprocess

from conftest import REPO
from iree_kernels import relink, toolchains

SAXPY_KERNELS = {"vulkan": ("kernels/vulkan/saxpy_128.glsl", 128),
                 "cuda": ("kernels/cuda/saxpy_256.cu", 256)}


def iree_compiles_own(project, out, target: str = "llvm-cpu", model: str = "mlp") -> bytes:
    """iree-compile of the model itself, its own substitution flags, executables unlinked."""
    here = project.root / f"build/{target}/{model}"
    with open(project.root / f"models/{model}.mlir", "rb") as model:
        subprocess.run([toolchains.iree_compile(), "-", f"@{here}/options.flags",
                        f"@{here}/substitutions.flags", relink.UNLINKED, "-o", str(out)],
                       stdin=model, cwd=project.root, check=True, capture_output=True)
    return out.read_bytes()


def saxpy_wrapped(project, targets: list[str]) -> None:
    """models/saxpy.mlir with the demo's wrapped GPU kernel on each of ``targets``."""
    manifest = '[models.saxpy]\nsource = "models/saxpy.mlir"\n' \
               f'targets = {targets!r}\n'.replace("'", '"')
    for target in targets:
        kernel, size = SAXPY_KERNELS[target]
        project.copy(REPO / kernel, kernel)
        manifest += (f'\n[[substitutions]]\nmodel = "saxpy"\ntarget = "{target}"\n'
                     f'executable = "main_dispatch_0"\nfile = "{kernel}"\nmode = "wrapped"\n'
                     f'workgroup_size = [{size}]\nworkgroup_count = ["ceildiv(w0, {size})"]\n')
    project.write("kernels/saxpy.toml", manifest)
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
