"""SCons tool: GLSL compute shaders (.glsl, .comp) -> SPIR-V (.spv).

Builder:
  Spirv   shader.glsl -> shader.spv, entry point 'main'

Variables:
  GLSL_COMPILER     glslang (glslangValidator, default) or glslc
  GLSL_TARGET_ENV   Vulkan version the SPIR-V is for, default iree_kernels.binaries.spirv.TARGET_ENV
  GLSL_CPPPATH      include directories (shaders need #extension
                    GL_GOOGLE_include_directive : require); dependencies come from
                    the compiler's depfile, shader.spv.d, however includes are found.
                    The package's own (iree_kernels.include_path(): #include
                    "iree_kernels/grid.glsl") is searched after them
  GLSL_CPPDEFINES   preprocessor definitions
  GLSLANG, GLSLANGFLAGS, GLSLC, GLSLCFLAGS   the programs and extra flags
  SPIRVCOM, SPIRVCOMSTR   the command line and its short form

The entry point keeps the name 'main'; giving it an executable's export name is
a later step (IreeSpirvEntryPoint), since that name is known only once the
model's executables are dumped.
"""
from __future__ import annotations

import SCons.Builder
import SCons.Util

from iree_kernels import settings
from iree_kernels.binaries import spirv
from iree_kernels.core import toolchains
from iree_kernels.scons.escaping import program
from iree_kernels.scons.headers import (CANONICAL_DEPFILE, NO_SOURCE_SCANNER, depfile_emitter,
                                        depfile_scanner, package_include)
from iree_kernels.scons.kernels import KernelCompiler, add_kernel_compiler, version_emitter
from iree_kernels.scons.spawn import whole_file_command


def generate(env):
    env.SetDefault(
        GLSL_COMPILER=settings.default("GLSL_COMPILER"),
        GLSL_TARGET_ENV=spirv.TARGET_ENV,
        GLSL_CPPPATH=[],
        GLSL_CPPDEFINES=[],
        GLSLANG=program(toolchains.on_path("glslangValidator") or "glslangValidator"),
        GLSLANGFLAGS=SCons.Util.CLVar(""),
        GLSLC=program(toolchains.on_path("glslc") or "glslc"),
        GLSLCFLAGS=SCons.Util.CLVar("-O"),
        _GLSL_INCFLAGS='${_concat("-I", GLSL_CPPPATH, "", __env__, RDirs, TARGET, SOURCE)} '
                      '$( $IREE_KERNELS_INCFLAG $)',
        _GLSL_DEFFLAGS='${_defines("-D", GLSL_CPPDEFINES, "", __env__, TARGET, SOURCE)}',
        SPIRV_GLSLANGCOM="$( $GLSLANG $) -V --quiet --target-env $GLSL_TARGET_ENV -S comp "
                         "$GLSLANGFLAGS $_GLSL_INCFLAGS $_GLSL_DEFFLAGS $( --depfile ${TARGETS[1]} $) "
                         "$SOURCE -o $TARGET",
        SPIRV_GLSLCCOM="$( $GLSLC $) -fshader-stage=compute --target-env=$GLSL_TARGET_ENV "
                       "$GLSLCFLAGS $_GLSL_INCFLAGS $_GLSL_DEFFLAGS $( -MD -MF ${TARGETS[1]} $) "
                       "$SOURCE -o $TARGET",
        SPIRVCOM="${SPIRV_GLSLCCOM if GLSL_COMPILER == 'glslc' else SPIRV_GLSLANGCOM}",
        SPIRVCOMSTR="",
    )
    package_include(env, "_GLSL_SCANPATH", "GLSL_CPPPATH")
    action = [whole_file_command("SPIRVCOM", "$SPIRVCOMSTR"), CANONICAL_DEPFILE]
    emitters = [depfile_emitter, version_emitter("SPIRVCOM")]
    scanner = depfile_scanner("GlslScanner", [".glsl", ".comp"], "_GLSL_SCANPATH")
    env["BUILDERS"]["Spirv"] = SCons.Builder.Builder(
        action=action, suffix=".spv", src_suffix=[".glsl", ".comp"],
        source_scanner=NO_SOURCE_SCANNER, target_scanner=scanner, emitter=emitters)
    for suffix in (".glsl", ".comp"):
        add_kernel_compiler(env, KernelCompiler(suffix, "SPIRVCOM", _compiler),
                            action, emitters, ".spv", NO_SOURCE_SCANNER, scanner)


def _compiler(env) -> tuple[str, str | None]:
    name = "glslc" if env["GLSL_COMPILER"] == "glslc" else "glslangValidator"
    return name, toolchains.on_path(name)


def exists(env):
    return env.Detect([toolchains.on_path("glslangValidator") or "glslangValidator", "glslc"])
