"""A kernel kind is one registered KernelKind and its tool file: a kind added from the outside,
through the package's public face only (``from iree_kernels import ...``), is compiled, wrapped
and checked, with no other file of the build knowing it.

The build stops at the module's substitutions.flags (where kernels are checked): IREE 3.13 links
an llvm-cpu object only where its name ends in .o, the suffix of a kind the build has already.
"""
from __future__ import annotations

import os
import sys

import pytest

from conftest import REPO, SAXPY_C
from iree_kernels.core import toolchains

# The kinds a new language registers: C under another suffix, compiled to an object of its own
# kind, which a checker of its own checks with a setting of its own (FAKE_LEVEL, from the
# SConstruct's environment).
SCONSTRUCT = """\
import os
from iree_kernels import KernelKind, register_kind, run

def check(planned, settings, checker, timeouts):
    run([checker, planned.path, settings["FAKE_LEVEL"]], file=planned.path,
        doing="check the kernel", timeouts=timeouts)

register_kind(KernelKind(".fk", "a fake kernel", ("llvm-cpu",), "wrapped", ("wrapped",),
                         compiles_to=".fko", tool="fake_kernel",
                         short_lines=(("FAKECOMSTR", "FAKE     $SOURCE"),)))
register_kind(KernelKind(".fko", "a fake object", ("llvm-cpu",), "wrapped", ("wrapped",),
                         checker="fake-check", check=check,
                         check_settings=(("FAKE_LEVEL", "lenient"),)))
DefaultEnvironment(tools=[])
Environment(tools=["iree_project"], toolpath=["tools"],
            FAKE_LEVEL=os.environ.get("FAKE_LEVEL", "lenient")).IreeKernelProject()
"""
TOOL = """\
from iree_kernels import (KernelCompiler, add_kernel_compiler, on_path, version_emitter,
                          whole_file_command)

def generate(env):
    env.SetDefault(FAKE_CC=on_path("clang") or "clang",
                   FAKECOM="$FAKE_CC -x c -target x86_64-unknown-unknown-eabi-elf -O2 "
                           "-ffreestanding -fvisibility=hidden -fno-plt -c $SOURCE -o $TARGET",
                   FAKECOMSTR="")
    add_kernel_compiler(env, KernelCompiler(".fk", "FAKECOM",
                                            lambda env: ("clang", on_path("clang"))),
                        whole_file_command("FAKECOM", "$FAKECOMSTR"),
                        [version_emitter("FAKECOM")], ".fko")

def exists(env):
    return True
"""
CHECKER = f"""#!{sys.executable}
import sys
if sys.argv[1:] == ["--version"]:
    sys.exit(print("fake-check 1.0"))
open(sys.argv[0] + ".log", "a").write(" ".join(sys.argv[1:]) + "\\n")
if sys.argv[2] == "strict":
    sys.exit(print(sys.argv[1] + ": error: too lenient a kernel"))
"""
MANIFEST = SAXPY_C.replace("kernels/saxpy.c", "kernels/saxpy.fk")


@pytest.mark.skipif(toolchains.on_path("clang") is None, reason="no clang")
def test_a_kind_added_with_its_tool_file_builds_and_is_checked(project):
    project.write("SConstruct", SCONSTRUCT)
    project.write("tools/fake_kernel.py", TOOL)
    checker = project.write("bin/fake-check", CHECKER)
    checker.chmod(0o755)
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.fk")
    project.write("kernels/saxpy.toml", MANIFEST)
    path = {"PATH": f"{checker.parent}{os.pathsep}{os.environ['PATH']}"}
    flags = "build/llvm-cpu/saxpy/substitutions.flags"
    built = project.scons(flags, env=path)
    assert "FAKE     kernels/saxpy.fk" in built.output      # the kind's short progress line
    assert project.read(flags) == ("--iree-hal-substitute-executable-source=main_dispatch_0="
                                   "build/llvm-cpu/saxpy/main_dispatch_0.wrapper.mlir\n")
    assert "build/kernels/saxpy.fko" in project.read(
        "build/llvm-cpu/saxpy/main_dispatch_0.wrapper.mlir")
    (checked,) = project.read("bin/fake-check.log").splitlines()
    assert checked.endswith("saxpy.fko lenient")        # the kind's setting, its default
    refused = project.scons(flags, env={**path, "FAKE_LEVEL": "strict"},
                            expect_ok=False)
    assert ("scons: *** [build/llvm-cpu/saxpy/substitutions.flags] kernels/saxpy.toml:5: "
            "[[substitutions]] #1 (executable 'main_dispatch_0' of saxpy/llvm-cpu): kernel "
            "kernels/saxpy.fk (compiled to build/kernels/saxpy.fko): "
            "fake-check failed to check the kernel:\nbuild/kernels/saxpy.fko: error: too lenient "
            "a kernel\n") in refused.output
