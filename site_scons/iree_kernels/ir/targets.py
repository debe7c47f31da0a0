"""The compilation targets a model can be built for, and which kernel files fit them.

A target is IREE's name for a backend plus the iree-compile flags that select
it and the runtime device that runs its modules. Nothing here runs a tool.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

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
