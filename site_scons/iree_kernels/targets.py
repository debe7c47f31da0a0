"""The compilation targets a model can be built for, and which kernel files fit them.

A target is IREE's name for a backend plus the iree-compile flags that select
it and the runtime device that runs its modules. Nothing here runs a tool.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from . import kernel_checks, spirv

PTX_ISA_VERSION = "9.0"     # the newest PTX ISA the driver of CUDA 13.0 (580) loads

# Flags every compile gets, so that modules do not depend on where they were built.
REPRODUCIBLE_FLAGS = ("--iree-vm-bytecode-module-strip-source-map",)


@dataclass(frozen=True)
class Target:
    name: str
    compile_flags: tuple[str, ...]    # without the GPU architecture: see flags()
    run_device: str
    arch_option: str = ""             # the iree-compile option naming the GPU architecture
    arch_variable: str = ""           # the build variable listing the architectures
    default_arch: str = ""
    arch_pattern: str = ""            # what an architecture name looks like (a regex)
    known_archs: tuple[str, ...] = ()  # what IREE 3.12 and 3.13 accept (tests/unit/test_targets.py)

    def flags(self, arch: str = "") -> tuple[str, ...]:
        """iree-compile's flags selecting this target, for ``arch`` (default: default_arch)."""
        arch = arch or self.default_arch
        return self.compile_flags + ((f"--{self.arch_option}={arch}",) if self.arch_option else ())


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
        ("--iree-hal-target-device=cuda",),
        "cuda", "iree-cuda-target", "CUDA_ARCH", "sm_80", r"sm_\d+[a-z]?",
        ("sm_60", "sm_61", "sm_62", "sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87",
         "sm_89", "sm_120", "sm_121")),
    "hip": Target(
        "hip",
        ("--iree-hal-target-device=hip",),
        "hip", "iree-rocm-target", "HIP_ARCH", "gfx942", r"gfx[0-9a-f]+",
        ("gfx908", "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1103",
         "gfx1150", "gfx1151", "gfx1200", "gfx1201")),
}


# A model's targets where its manifest lists none: hip only where asked for (no AMD GPU here).
DEFAULT_TARGETS = ("llvm-cpu", "vulkan", "cuda")


@dataclass(frozen=True)
class ModuleTarget:
    """One module per model of a target: on a GPU target, for one of its architectures.

    ``folder`` is where its modules go (``build/<folder>/<model>.vmfb``): the
    target's name where one architecture is built, ``<target>-<arch>`` for
    each of several.
    """
    target: Target
    arch: str
    folder: str

    @property
    def flags(self) -> tuple[str, ...]:
        return self.target.flags(self.arch)


def parse_archs(target: Target, value: str) -> list[str]:
    """The architectures a comma-separated ``value`` (e.g. CUDA_ARCH=sm_80,sm_86) lists.

    Raises ValueError naming the variable for a malformed or repeated name, or
    an empty list. Whether IREE accepts them is ``unknown_archs``' business.
    """
    archs = [a.strip() for a in value.split(",") if a.strip()]
    if not archs:
        raise ValueError(f"{target.arch_variable} is empty; e.g. {target.default_arch}")
    for arch in archs:
        if not re.fullmatch(target.arch_pattern, arch):
            raise ValueError(f"{target.arch_variable}={value}: '{arch}' is not a {target.name} "
                             f"architecture name (like {target.default_arch})")
        if archs.count(arch) > 1:
            raise ValueError(f"{target.arch_variable}={value}: '{arch}' is listed twice")
    return archs


def module_targets(target: Target, archs: list[str]) -> list[ModuleTarget]:
    """The modules one model gets for ``target``: one per architecture (one where it has none)."""
    if not target.arch_option:
        return [ModuleTarget(target, "", target.name)]
    if len(archs) == 1:
        return [ModuleTarget(target, archs[0], target.name)]
    return [ModuleTarget(target, arch, f"{target.name}-{arch}") for arch in archs]


def rejected_arch_message(target: Target, arch: str, compiler: str = "IREE") -> str:
    """The one line saying ``compiler`` has no ``arch``, and which it accepts."""
    return (f"{target.arch_variable}={arch}: {compiler} has no {target.name} target '{arch}'; "
            f"IREE 3.12 and 3.13 accept {', '.join(target.known_archs)}")


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
