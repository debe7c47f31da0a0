"""The compilation targets a model can be built for, and which kernel files fit them.

A target is IREE's name for a backend plus the iree-compile flags that select
it and the runtime device that runs its modules. Nothing here runs a tool.
"""
from __future__ import annotations

from dataclasses import dataclass

# Flags every compile gets, so that modules do not depend on where they were built.
REPRODUCIBLE_FLAGS = ("--iree-vm-bytecode-module-strip-source-map",)


@dataclass(frozen=True)
class Target:
    name: str
    compile_flags: tuple[str, ...]
    run_device: str


TARGETS = {
    "llvm-cpu": Target(
        "llvm-cpu",
        ("--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu",
         "--iree-llvmcpu-target-cpu=generic",
         "--iree-llvmcpu-debug-symbols=false"),
        "local-sync"),
    "vulkan": Target(
        "vulkan",
        ("--iree-hal-target-device=vulkan",),
        "vulkan"),
    "cuda": Target(
        "cuda",
        ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_80"),
        "cuda"),
}

MODES = ("source", "object", "wrapped")


@dataclass(frozen=True)
class KernelKind:
    """What a kernel file of one suffix is, and where it may go."""
    suffix: str
    description: str
    targets: tuple[str, ...]
    default_mode: str
    modes: tuple[str, ...]
    why_not: str = ""              # why the other modes do not fit
    compiles_to: str | None = None  # the suffix of what the build makes of it


_GPU_MODES = ("object", "wrapped")
_GPU_WHY = ("a compiled kernel replaces IREE's binary (object mode) or is linked by a "
            "generated wrapper (wrapped mode); given as a source, iree-compile fails deep "
            "in its lowering")
_NATIVE_WHY = ("a native object can only be linked by a generated wrapper (wrapped mode); "
               "substituted as an object or a source it crashes iree-compile")
KERNEL_KINDS = {kind.suffix: kind for kind in (
    KernelKind(".mlir", "an MLIR hal.executable source", tuple(TARGETS), "source", ("source",),
               "an .mlir file replaces an executable's source; object and wrapped modes "
               "take a kernel (.ptx, .spv, .c, ...)"),
    KernelKind(".cu", "a CUDA kernel", ("cuda",), "object", _GPU_MODES, _GPU_WHY, ".ptx"),
    KernelKind(".ptx", "a PTX kernel", ("cuda",), "object", _GPU_MODES, _GPU_WHY),
    KernelKind(".glsl", "a GLSL compute shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY,
               ".spv"),
    KernelKind(".comp", "a GLSL compute shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY,
               ".spv"),
    KernelKind(".spv", "a SPIR-V shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY),
    KernelKind(".c", "a C kernel", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY, ".o"),
    KernelKind(".o", "a native object", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY),
)}


def kernel_kind(path: str) -> KernelKind | None:
    return KERNEL_KINDS.get(_suffix(path))


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
