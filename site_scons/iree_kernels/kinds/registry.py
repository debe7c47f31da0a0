"""The kernel kinds: which kernel file of which suffix fits which target, in which mode,
compiled by which tool and checked how.

Not for the targets themselves (``iree_kernels.ir.targets``) nor for a language's
own fields (``iree_kernels.kinds.triton_kernels``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from iree_kernels.binaries import kernel_checks, spirv
from iree_kernels.ir.targets import PTX_ISA_VERSION, TARGETS

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
    tool: str = ""                 # the SCons tool (site_tools/) that compiles it, if any
    checker: str = ""              # the program that checks a kernel of this kind, if any
    # What checks a kernel of this kind the build is given or makes (see kernel_checks),
    # and the variables it reads: (name, default) pairs; the module's architecture
    # overrides its target's arch_variable.
    check: Callable[..., None] | None = None
    check_settings: tuple[tuple[str, str], ...] = ()
    entry_point_main: bool = False  # compiled, its entry point is 'main': renamed to the export
    # Compiled per target to another suffix than compiles_to: (("hip", ".hsaco"),)
    compiles_for: tuple[tuple[str, str], ...] = ()
    # Compiled once per substitution, from the executable's layout (a Triton kernel's
    # signature): what it makes lies in the module's folder, named after the substitution.
    per_substitution: bool = False

    def made_suffix(self, target: str) -> str | None:
        """The suffix of what the build makes of this kind of kernel for ``target``."""
        return dict(self.compiles_for).get(target, self.compiles_to)


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
    KernelKind(".cu", "a CUDA kernel", ("cuda",), "object", _GPU_MODES, _GPU_WHY, ".ptx",
               tool="ptx"),
    KernelKind(".ptx", "a PTX kernel", ("cuda",), "object", _GPU_MODES, _GPU_WHY,
               checker="ptxas", check=kernel_checks.check_ptx,
               check_settings=(("CUDA_ARCH", TARGETS["cuda"].default_arch),
                               ("PTX_ISA_VERSION", PTX_ISA_VERSION))),
    KernelKind(".glsl", "a GLSL compute shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY,
               ".spv", tool="glsl", entry_point_main=True),
    KernelKind(".comp", "a GLSL compute shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY,
               ".spv", tool="glsl", entry_point_main=True),
    KernelKind(".spv", "a SPIR-V shader", ("vulkan",), "object", _GPU_MODES, _GPU_WHY,
               checker="spirv-val", check=kernel_checks.check_spirv,
               check_settings=(("GLSL_TARGET_ENV", spirv.TARGET_ENV),)),
    KernelKind(".hip", "a HIP kernel", ("hip",), "object", _GPU_MODES, _GPU_WHY, ".hsaco",
               tool="hsaco"),
    KernelKind(".hsaco", "an AMD GPU code object", ("hip",), "object", _GPU_MODES, _GPU_WHY,
               check=kernel_checks.check_hsaco,
               check_settings=(("HIP_ARCH", TARGETS["hip"].default_arch),)),
    KernelKind(".c", "a C kernel", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY, ".o",
               tool="elf_object"),
    KernelKind(".o", "a native object", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY,
               check=kernel_checks.check_object),
    KernelKind(".py", "a Triton kernel", ("cuda", "hip"), "wrapped", ("wrapped",),
               "a Triton kernel launches with its own workgroup size (num_warps): it is "
               "linked by a generated wrapper (wrapped mode)", ".ptx", tool="triton",
               compiles_for=(("hip", ".hsaco"),), per_substitution=True),
)}


def kernel_kind(path: str) -> KernelKind | None:
    return KERNEL_KINDS.get(_suffix(path))


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
