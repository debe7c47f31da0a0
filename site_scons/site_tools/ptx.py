"""SCons tool: CUDA kernels (.cu) -> PTX (.ptx), with nvcc or clang.

Builder:
  Ptx    kernel.cu -> kernel.ptx

Variables:
  CUDA_COMPILER     nvcc (default) or clang
  CUDA_ARCH         one GPU architecture, default the cuda target's (iree_kernels.ir.targets;
                    iree_project gives each
                    builder call one of the build's CUDA_ARCH list)
  CUDA_CPPPATH      include directories (dependencies come from the compiler's
                    depfile, kernel.ptx.d, however includes are found). The
                    package's own (iree_kernels.include_path(): #include
                    "iree_kernels/grid.cuh") is searched after them
  CUDA_CPPDEFINES   preprocessor definitions
  NVCC, NVCCFLAGS   the nvcc program and extra flags
  CLANG_CUDA, CLANG_CUDAFLAGS   the clang program and extra flags
  PTXCOM, PTXCOMSTR the command line and its short form

clang compiles without CUDA's headers (-nocudainc), with a small prelude for
the CUDA keywords, so it needs no CUDA installation of a version it knows.
"""
from __future__ import annotations

from pathlib import Path

import SCons.Builder
import SCons.Util

import iree_kernels
from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.ir.targets import TARGETS
from iree_kernels.scons.escaping import file_argument, program
from iree_kernels.scons.headers import (CANONICAL_DEPFILE, NO_SOURCE_SCANNER, depfile_emitter,
                                        depfile_scanner, package_include)
from iree_kernels.scons.kernels import KernelCompiler, add_kernel_compiler, version_emitter
from iree_kernels.scons.spawn import whole_file_command

CLANG_PRELUDE = Path(iree_kernels.__file__).parent / "data" / "clang_cuda_prelude.h"

def generate(env):
    env.SetDefault(
        CUDA_COMPILER=settings.default("CUDA_COMPILER"),
        CUDA_ARCH=TARGETS["cuda"].default_arch,
        CUDA_CPPPATH=[],
        CUDA_CPPDEFINES=[],
        NVCC=program(toolchains.nvcc() or "nvcc"),
        NVCCFLAGS=SCons.Util.CLVar("-O3"),
        CLANG_CUDA=program(toolchains.on_path("clang") or "clang"),
        CLANG_CUDAFLAGS=SCons.Util.CLVar("-O3"),
        CLANG_CUDA_PRELUDE=file_argument(str(CLANG_PRELUDE)),
        _CUDA_INCFLAGS='${_concat("-I", CUDA_CPPPATH, "", __env__, RDirs, TARGET, SOURCE)} '
                      '$( $IREE_KERNELS_INCFLAG $)',
        _CUDA_DEFFLAGS='${_defines("-D", CUDA_CPPDEFINES, "", __env__, TARGET, SOURCE)}',
        PTX_NVCCCOM="$( $NVCC $) -ptx -arch=$CUDA_ARCH $NVCCFLAGS $_CUDA_INCFLAGS $_CUDA_DEFFLAGS "
                    "$_PTX_DEPFLAGS $SOURCE -o $TARGET",
        PTX_CLANGCOM="$( $CLANG_CUDA $) -x cuda --cuda-device-only -S --cuda-gpu-arch=$CUDA_ARCH "
                     "-nocudainc -nocudalib -Wno-unknown-cuda-version "
                     "$( -include $CLANG_CUDA_PRELUDE $) $CLANG_CUDAFLAGS $_CUDA_INCFLAGS "
                     "$_CUDA_DEFFLAGS $_PTX_DEPFLAGS $SOURCE -o $TARGET",
        _PTX_DEPFLAGS="$( -MMD -MF ${TARGETS[1]} $)",
        PTXCOM="${PTX_CLANGCOM if CUDA_COMPILER == 'clang' else PTX_NVCCCOM}",
        PTXCOMSTR="",
    )
    package_include(env, "_CUDA_SCANPATH", "CUDA_CPPPATH")
    action = [whole_file_command("PTXCOM", "$PTXCOMSTR"), CANONICAL_DEPFILE]
    emitters = [_prelude_emitter, depfile_emitter, version_emitter("PTXCOM")]
    scanner = depfile_scanner("CudaScanner", [".cu", ".cuh"], "_CUDA_SCANPATH")
    env["BUILDERS"]["Ptx"] = SCons.Builder.Builder(
        action=action, suffix=".ptx", src_suffix=".cu", source_scanner=NO_SOURCE_SCANNER,
        target_scanner=scanner, emitter=emitters)
    add_kernel_compiler(env, KernelCompiler(".cu", "PTXCOM", _compiler, "CUDA_ARCH",
                                            compile_database=True,
                                            include_variable="CUDA_CPPPATH"),
                        action, emitters, ".ptx", NO_SOURCE_SCANNER, scanner)


def _compiler(env) -> tuple[str, str | None]:
    if env["CUDA_COMPILER"] == "clang":
        return "clang", toolchains.on_path("clang")
    return "nvcc", toolchains.nvcc()


def _prelude_emitter(target, source, env):
    # The prelude's path is left out of the command's signature ($( $)); its content is not.
    if env.subst("$CUDA_COMPILER") == "clang":
        env.Depends(target, env.fs.File(env.subst("$CLANG_CUDA_PRELUDE")))   # no second expansion
    return target, source


def exists(env):
    return env.Detect([env.get("NVCC") or toolchains.nvcc() or "nvcc", "clang"])
