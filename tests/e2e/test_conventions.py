"""SCons conventions: scons -h (targets, variables, booleans as docs/variables.md writes them),
CHECK_STRICT, scons -c, compile_commands.json, scaffold's LANGUAGE."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import REPO

MANIFEST = '[models.mlp]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'


def test_help_writes_booleans_yes_and_no(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MANIFEST)
    help_text = project.scons("-h", "VERBOSE=1").stdout
    assert "VERBOSE: print full command lines (yes|no)\n    default: no\n    actual: yes\n" \
        in help_text
    assert "CHECK_STRICT: " in help_text
    assert "False" not in help_text and "True" not in help_text


def test_a_mistyped_variable_gets_the_name_it_was_meant_to_be(project):
    project.write("kernels/demo.toml", "")
    typo = project.scons("IREE_TARGET=vulkan", expect_ok=False)
    assert typo.returncode != 0
    assert "unknown command-line variable 'IREE_TARGET' (did you mean 'IREE_TARGETS'?); " \
           "see scons -h" in typo.output


def test_a_skipped_check_fails_only_with_check_strict(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")          # no expected outputs
    project.write("kernels/demo.toml", MANIFEST)
    lenient = project.scons("check")
    assert ("check: skipped build/llvm-cpu/mlp.vmfb: model 'mlp' has no expected outputs; "
            "create models/mlp.expected.toml") in lenient.stdout
    strict = project.scons("check", "CHECK_STRICT=yes", expect_ok=False)
    assert strict.returncode == 2
    assert "llvm-cpu compile) (CHECK_STRICT=yes)" in strict.output
    assert project.scons("CHECK_STRICT=yes").returncode == 0          # builds without checks pass


SAXPY = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu", "cuda"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/cpu/saxpy.c"
workgroup_count = ["ceildiv(w0, 1024)"]

[[substitutions]]
model = "saxpy"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/cuda/saxpy_256.cu"
mode = "wrapped"
workgroup_size = [256]
workgroup_count = ["ceildiv(w0, 256)"]
"""


@pytest.fixture
def saxpy(project):
    for name in ("saxpy.mlir", "saxpy.expected.toml", "saxpy/x.npy", "saxpy/y.npy",
                 "saxpy/out.npy"):
        project.copy(REPO / "models" / name, f"models/{name}")
    for name in ("cpu/saxpy.c", "cuda/saxpy_256.cu"):
        project.copy(REPO / "kernels" / name, f"kernels/{name}")
    project.write("kernels/demo.toml", SAXPY)
    return project


def test_help_lists_every_target_then_the_variables_once(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MANIFEST)
    help_text = project.scons("-h").stdout
    targets, variables = help_text.split("\nTargets", 1)[1].split("\nVariables:\n", 1)
    listed = re.findall(r"^  (\S+)  +\S", targets, re.M)
    declared = {name for tool in (REPO / "site_scons").rglob("*.py")
                for name in re.findall(r'Alias\("([\w.-]+)"', tool.read_text())}
    assert declared <= set(listed), declared - set(listed)
    assert "compile_commands.json" in listed and len(listed) == len(set(listed))
    for name in ("IREE_TARGETS", "CHECK_STRICT", "LANGUAGE", "CACHE_DIR", "CODEGEN_CACHE_DIR"):
        assert help_text.count(f"\n{name}: ") == 1, name
        assert f"\n{name}: " in variables
    assert "--cache-debug" not in help_text            # SCons's own options: scons -H
    assert help_text.rstrip().endswith("Use scons -H for help about SCons built-in "
                                       "command-line options.")


def test_compile_commands_lists_each_kernel_with_its_flags(saxpy):
    saxpy.write("SConstruct", (REPO / "SConstruct").read_text().replace(
        "env.IreeKernelProject()",
        'env.Append(NVCCFLAGS=["-lineinfo"], ELF_CFLAGS=["-DFROM_ELF_CFLAGS=1"])\n'
        "env.IreeKernelProject()"))
    saxpy.scons("compile_commands.json")
    entries = {e["file"]: e for e in json.loads(saxpy.read("compile_commands.json"))}
    assert sorted(entries) == ["kernels/cpu/saxpy.c", "kernels/cuda/saxpy_256.cu"]
    c, cu = entries["kernels/cpu/saxpy.c"], entries["kernels/cuda/saxpy_256.cu"]
    assert c["directory"] == cu["directory"] == str(saxpy.root)
    assert c["output"] == "build/kernels/cpu/saxpy.o"
    assert cu["output"] == "build/kernels/cuda/saxpy_256.ptx"
    assert "-DFROM_ELF_CFLAGS=1" in c["arguments"] and "-ffreestanding" in c["arguments"]
    assert c["arguments"][-3:] == ["kernels/cpu/saxpy.c", "-o", "build/kernels/cpu/saxpy.o"]
    assert Path(c["arguments"][0]).name == "clang"
    assert Path(cu["arguments"][0]).name == "nvcc" and "-lineinfo" in cu["arguments"]
    assert saxpy.scons("compile_commands.json").ran("COMPDB") == []          # up to date
    clang = saxpy.scons("compile_commands.json", "CUDA_COMPILER=clang", "CUDA_ARCH=sm_86")
    assert clang.ran("COMPDB") == ["compile_commands.json"]
    cu = {e["file"]: e for e in json.loads(saxpy.read("compile_commands.json"))}[cu["file"]]
    assert Path(cu["arguments"][0]).name == "clang" and "--cuda-gpu-arch=sm_86" in cu["arguments"]
    # The recorded command is the build's: run again, it makes the same object.
    saxpy.scons("IREE_TARGETS=llvm-cpu")
    built = saxpy.root / c["output"]
    made = built.read_bytes()
    built.unlink()
    subprocess.run(c["arguments"], cwd=c["directory"], check=True, timeout=120)
    assert built.read_bytes() == made


def test_clean_leaves_no_folder_behind(saxpy):
    saxpy.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")     # executables IREE compiles
    saxpy.write("kernels/mlp.toml", MANIFEST)
    cpu = ["IREE_TARGETS=llvm-cpu", "EXECUTABLE_CACHE=1"]
    saxpy.scons(*cpu)
    saxpy.scons(*cpu, "check", "verify", "dump", "DUMP=sources,benchmarks")
    build = saxpy.root / "build"
    assert (build / "llvm-cpu/saxpy/verify").is_dir() and (build / "codegen-cache").is_dir()
    saxpy.scons(*cpu, "-c", "dump")
    assert not (build / "llvm-cpu/saxpy/dump").exists()
    assert [d for d in build.rglob("*") if d.is_dir() and not any(d.iterdir())] == []
    saxpy.scons(*cpu, "-c")
    assert not build.exists()


def test_scaffold_language_follows_the_target(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MANIFEST)
    wrong = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_1", "LANGUAGE=glsl",
                          expect_ok=False)
    assert wrong.returncode == 2
    assert "LANGUAGE=glsl writes kernels for target 'vulkan', not 'llvm-cpu'" in wrong.output
    unknown = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_1", "LANGUAGE=rust",
                            expect_ok=False)
    assert "LANGUAGE=rust: unknown language; languages: cuda, glsl, c, triton, mlir" in \
        unknown.output
    build = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_1")
    assert "scaffold: wrote kernels/llvm-cpu/mlp_main_dispatch_1.c" in build.stdout


def test_a_dry_run_of_a_clean_checkout_lists_every_step_and_builds_nothing(project):
    # The kernels' dependency scanner once needed the executor SCons releases in a dry run.
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / "kernels/vulkan/mlp_bias_relu_rowsum.glsl", "kernels/vulkan/k.glsl")
    project.write("kernels/demo.toml", '[models.mlp]\nsource = "models/mlp.mlir"\n'
                  'targets = ["vulkan"]\n\n[[substitutions]]\nmodel = "mlp"\n'
                  'target = "vulkan"\nexecutable = "main_dispatch_1"\n'
                  'file = "kernels/vulkan/k.glsl"\n')
    dry = project.scons("-n")
    assert "SPIRV    kernels/vulkan/k.glsl" in dry.stdout
    assert "RELINK   build/vulkan/mlp.vmfb" in dry.stdout
    assert not (project.root / "build").exists()
    project.scons()
    assert project.scons("-n").stdout.strip().endswith("is up to date.")


TABLE_SAXPY = """#include <stddef.h>
#include <stdint.h>
static const float SCALE[8] = {2.0f, 3.0f, 5.0f, 7.0f, 11.0f, 13.0f, 17.0f, 19.0f};
void saxpy(const float *x, const float *y, float *out,
           uint32_t n_lo, uint32_t n_hi, uint32_t out_n_lo, uint32_t out_n_hi,
           size_t id_x, size_t id_y, size_t id_z,
           size_t count_x, size_t count_y, size_t count_z) {
  size_t n = (size_t)n_lo | (size_t)n_hi << 32;
  float scale = SCALE[id_y & 7];                   /* a constant table: id_y is 0 */
  size_t begin = id_x * 1024, end = begin + 1024 < n ? begin + 1024 : n;
  for (size_t i = begin; i < end; ++i) out[i] = scale * x[i] + y[i];
}
"""


def test_a_c_kernel_holding_a_constant_table_links(saxpy):
    # Without -fPIC the table's address is an R_X86_64_32S relocation, which iree-lld refuses.
    saxpy.write("kernels/cpu/saxpy.c", TABLE_SAXPY)
    saxpy.scons("check", "IREE_TARGETS=llvm-cpu")


def test_a_workgroup_count_that_wraps_at_the_models_workload_fails_verify_naming_it(saxpy):
    # It builds (the count depends on the workload); at n = 5000 it launches 2^64 - 1 groups.
    saxpy.write("kernels/demo.toml", SAXPY.replace(
        'workgroup_count = ["ceildiv(w0, 1024)"]',
        'workgroup_count = ["ceildiv(w0, 1024) - ceildiv(w0, 1024) - 1"]'))
    assert saxpy.scons("IREE_TARGETS=llvm-cpu").ok
    verify = saxpy.scons("verify", "IREE_TARGETS=llvm-cpu", expect_ok=False)
    assert "kernels/demo.toml:6: [[substitutions]] #1 (executable 'main_dispatch_0' of " \
           "saxpy/llvm-cpu): workgroup_count ['ceildiv(w0, 1024) - ceildiv(w0, 1024) - 1'] is " \
           "[18446744073709551615, 1, 1] at dispatch site 1 (workload w0 = 5000, w1 = 5000)" in \
        verify.output
