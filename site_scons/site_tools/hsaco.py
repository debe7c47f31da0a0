"""SCons tool: HIP kernels (.hip) -> AMD GPU code objects (.hsaco), with clang.

Builder:
  Hsaco   kernel.hip -> kernel.hsaco

clang compiles the device side only, for one architecture, without ROCm's
headers and device libraries (-nogpuinc -nogpulib): a small prelude defines
the HIP keywords and threadIdx/blockIdx/blockDim/gridDim; math functions from
ROCm's device libraries are not available. Debian 12's clang 14 knows no
gfx942; clang-19 (Debian 12) does, with lld-19 linking the code object.

Variables:
  HIP_ARCH          AMD GPU architecture, default the hip target's (iree_kernels.ir.targets)
  HIP_CLANG         the clang (default: $HIP_CLANG in the environment, else clang-19
                    or newer on PATH)
  HIP_CLANGFLAGS    extra flags, default -O3
  HIP_CPPPATH       include directories; #include dependencies are scanned
  HIP_CPPDEFINES    preprocessor definitions
  HSACOCOM, HSACOCOMSTR  the command line and its short form
"""
from __future__ import annotations

from pathlib import Path

import SCons.Builder
import SCons.Util

import iree_kernels
from iree_kernels.core import toolchains
from iree_kernels.ir.targets import TARGETS
from iree_kernels.scons.escaping import file_argument, program
from iree_kernels.scons.headers import include_scanner
from iree_kernels.scons.kernels import KernelCompiler, add_kernel_compiler, version_emitter
from iree_kernels.scons.spawn import whole_file_command

HIP_PRELUDE = Path(iree_kernels.__file__).parent / "data" / "clang_hip_prelude.h"


def generate(env):
    env.SetDefault(
        HIP_ARCH=TARGETS["hip"].default_arch,
        HIP_CLANG=program(toolchains.hip_clang() or "clang-19"),
        HIP_CLANGFLAGS=SCons.Util.CLVar("-O3"),
        HIP_CPPPATH=[],
        HIP_CPPDEFINES=[],
        HIP_PRELUDE=file_argument(str(HIP_PRELUDE)),
        _HIP_INCFLAGS='${_concat("-I", HIP_CPPPATH, "", __env__, RDirs, TARGET, SOURCE)}',
        _HIP_DEFFLAGS='${_defines("-D", HIP_CPPDEFINES, "", __env__, TARGET, SOURCE)}',
        HSACOCOM="$( $HIP_CLANG $) -x hip --offload-arch=$HIP_ARCH --offload-device-only "
                 "--no-gpu-bundle-output -nogpuinc -nogpulib $( -include $HIP_PRELUDE $) "
                 "$HIP_CLANGFLAGS $_HIP_INCFLAGS $_HIP_DEFFLAGS $SOURCE -o $TARGET",
        HSACOCOMSTR="",
    )
    scanner = include_scanner("HipScanner", [".hip", ".h"], "HIP_CPPPATH")
    action = whole_file_command("HSACOCOM", "$HSACOCOMSTR")
    emitters = [_prelude_emitter, version_emitter("HSACOCOM")]
    env["BUILDERS"]["Hsaco"] = SCons.Builder.Builder(
        action=action, suffix=".hsaco", src_suffix=".hip", source_scanner=scanner,
        emitter=emitters)
    add_kernel_compiler(env, KernelCompiler(".hip", "HSACOCOM", _compiler, "HIP_ARCH"),
                        action, emitters, ".hsaco", scanner)


def _compiler(env) -> tuple[str, str | None]:
    return "clang-19", toolchains.hip_clang()


def _prelude_emitter(target, source, env):
    # The prelude's path is left out of the command's signature ($( $)); its content is not.
    env.Depends(target, env.fs.File(str(HIP_PRELUDE)))
    return target, source


def exists(env):
    return env.Detect(env.get("HIP_CLANG") or toolchains.hip_clang() or "clang-19")
