"""Reading an AMD GPU code object (.hsaco) and checking it against the IREE executable it replaces.

iree-compile embeds any file given as a hip kernel and checks nothing; a code
object for another GPU, or whose kernel has another name, fails only when the
module is loaded on an AMD GPU. This module reads the ELF header (machine,
the architecture in e_flags) and the symbol table (kernels are the symbols
that have a ``<name>.kd`` kernel descriptor beside them). It does not read
the kernels' arguments (their metadata is MessagePack) and runs no tool.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from iree_kernels.binaries.elf import read_symbols
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Executable

EM_AMDGPU = 224
# EF_AMDGPU_MACH of the architectures IREE 3.12 and 3.13 target (LLVM's ELF.h).
MACHINES = {0x030: "gfx908", 0x03f: "gfx90a", 0x04c: "gfx942", 0x04f: "gfx950",
            0x041: "gfx1100", 0x046: "gfx1101", 0x044: "gfx1103", 0x043: "gfx1150",
            0x04a: "gfx1151", 0x048: "gfx1200", 0x04e: "gfx1201"}


@dataclass(frozen=True)
class CodeObject:
    arch: str                    # "gfx942", or "mach 0x..." for one not in MACHINES
    kernels: tuple[str, ...]


def read_hsaco(data: bytes, path: str) -> CodeObject:
    """The architecture and kernel names of a code object; raise if it is not one."""
    symbols = {s.name for s in read_symbols(data, path, "an AMD GPU code object")}
    machine, = struct.unpack_from("<H", data, 18)
    if machine != EM_AMDGPU:
        raise UserError(f"not an AMD GPU code object: ELF machine {machine}, not AMDGPU "
                        f"({EM_AMDGPU})", file=path)
    flags, = struct.unpack_from("<I", data, 48)
    mach = flags & 0xFF
    kernels = tuple(sorted(n for n in symbols if f"{n}.kd" in symbols))
    return CodeObject(MACHINES.get(mach, f"mach {mach:#05x}"), kernels)


def check_hsaco(code: CodeObject, path: str, executable: Executable, arch: str) -> None:
    """Raise unless ``code`` is for ``arch`` and has a kernel named like the executable's export."""
    if code.arch != arch:
        raise UserError(f"the code object is for {code.arch}, the module for {arch} (HIP_ARCH); "
                        f"compile it with --offload-arch={arch}", file=path)
    export = executable.export.name
    if export not in code.kernels:
        found = ", ".join(code.kernels) or "none"
        hint = " (a C++-mangled name: declare the kernel extern \"C\")" \
            if any(k.startswith("_Z") for k in code.kernels) else ""
        raise UserError(f"code object does not fit executable '{executable.name}': no kernel "
                        f"named '{export}' (the export's name, which IREE's HIP runtime looks "
                        f"up); its kernels: {found}{hint}", file=path)
