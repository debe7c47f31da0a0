"""SCons tool: C kernels (.c) -> objects (.o) for IREE's embedded ELF CPU target.

Builder:
  ElfObject   kernel.c -> kernel.o

The object is linked into an llvm-cpu executable by a generated wrapper
(wrapped mode), so it must be freestanding: no libc, no globals with
relocations IREE's loader refuses, no thread-local storage.

Variables:
  ELF_CC          clang
  ELF_TARGET      target triple, default x86_64-unknown-unknown-eabi-elf
  ELF_CFLAGS      default -std=c17 -O2 -ffreestanding -fPIC -fvisibility=hidden -fno-plt
                  -fdata-sections -ffunction-sections (-fPIC: iree-lld links a shared
                  object, and refuses the absolute relocations of a constant table)
  ELF_CPPPATH     include directories (dependencies come from clang's depfile,
                  kernel.o.d, however includes are found)
  ELF_CPPDEFINES  preprocessor definitions
  ELFCOM, ELFCOMSTR   the command line and its short form
"""
from __future__ import annotations

import SCons.Builder
import SCons.Util

from iree_kernels.core import toolchains
from iree_kernels.scons.escaping import program
from iree_kernels.scons.headers import (CANONICAL_DEPFILE, NO_SOURCE_SCANNER, depfile_emitter,
                                        depfile_scanner)
from iree_kernels.scons.kernels import KernelCompiler, add_kernel_compiler, version_emitter
from iree_kernels.scons.spawn import whole_file_command


def generate(env):
    env.SetDefault(
        ELF_CC=program(toolchains.on_path("clang") or "clang"),
        ELF_TARGET="x86_64-unknown-unknown-eabi-elf",
        ELF_CFLAGS=SCons.Util.CLVar("-std=c17 -O2 -ffreestanding -fPIC -fvisibility=hidden -fno-plt "
                                    "-fdata-sections -ffunction-sections"),
        ELF_CPPPATH=[],
        ELF_CPPDEFINES=[],
        _ELF_INCFLAGS='${_concat("-I", ELF_CPPPATH, "", __env__, RDirs, TARGET, SOURCE)}',
        _ELF_DEFFLAGS='${_defines("-D", ELF_CPPDEFINES, "", __env__, TARGET, SOURCE)}',
        ELFCOM="$( $ELF_CC $) -target $ELF_TARGET $ELF_CFLAGS $_ELF_INCFLAGS $_ELF_DEFFLAGS "
               "$( -MMD -MF ${TARGETS[1]} $) -c $SOURCE -o $TARGET",
        ELFCOMSTR="",
    )
    action = [whole_file_command("ELFCOM", "$ELFCOMSTR"), CANONICAL_DEPFILE]
    emitters = [depfile_emitter, version_emitter("ELFCOM")]
    scanner = depfile_scanner("ElfCScanner", [".c", ".h"], "ELF_CPPPATH")
    env["BUILDERS"]["ElfObject"] = SCons.Builder.Builder(
        action=action, suffix=".o", src_suffix=".c", source_scanner=NO_SOURCE_SCANNER,
        target_scanner=scanner, emitter=emitters)
    add_kernel_compiler(env, KernelCompiler(".c", "ELFCOM", _compiler, compile_database=True,
                                            include_variable="ELF_CPPPATH"),
                        action, emitters, ".o", NO_SOURCE_SCANNER, scanner)


def _compiler(env) -> tuple[str, str | None]:
    return "clang", toolchains.on_path("clang")


def exists(env):
    return env.Detect(toolchains.on_path("clang") or "clang")
