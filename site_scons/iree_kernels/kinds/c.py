"""C kernels (``.c``, compiled by the elf_object tool) and native objects (``.o``): target llvm-cpu.

Wrapped mode only: a generated wrapper imports the manifest's ``function``; an
object is checked by ``kernel_checks.check_object`` (it defines the function).
Not for the compile (``site_tools/elf_object.py``) nor for reading ELF (``binaries.elf``).
"""
from __future__ import annotations

from iree_kernels.binaries import kernel_checks
from iree_kernels.kinds.base import KernelKind, Scaffold

_NATIVE_WHY = ("a native object can only be linked by a generated wrapper (wrapped mode); "
               "substituted as an object or a source it crashes iree-compile")
_COMMENT = "a C kernel or native object: target llvm-cpu, wrapped mode"
KINDS = (
    KernelKind(".c", "a C kernel", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY, ".o",
               tool="elf_object", short_lines=(("ELFCOMSTR", "CC       $SOURCE"),), family=True,
               scaffold=Scaffold("c", ("llvm-cpu",), "scaffold/kernel.c.j2", "wrapped",
                                 default_for=("llvm-cpu",),
                                 constant_array=("static const {type} {name}[{count}] = {{", "};", "f")),
               schema_comment=_COMMENT,
               doc="compiles it for IREE's embedded ELF target (clang), links it through a "
                   "generated wrapper"),
    KernelKind(".o", "a native object", ("llvm-cpu",), "wrapped", ("wrapped",), _NATIVE_WHY,
               check=kernel_checks.check_object, schema_comment=_COMMENT,
               doc="links it through a generated wrapper"),
)
