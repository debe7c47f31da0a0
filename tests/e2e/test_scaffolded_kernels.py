"""End to end: a skeleton scaffolded for a real-model dispatch, filled in only at its TODO, is right.

squeezenet's first max pool: its output lies 3,154,176 bytes into its buffer
and IREE launches it over a 3-D grid. The skeleton states and applies the
offset and covers the whole launch, so writing the computation at its TODO
passes the differential check (``scons verify``); without the offset it fails.
On CUDA, where IREE 3.13's codegen fails on other executables of the model,
dump and scaffold still work; the check's harnesses are built here and run on
a GPU by tests/gpu/test_scaffolded_on_gpu.py.

``SCAFFOLD=`` names an ONNX-style executable (``model$async_dispatch_N``) by
its number or an export glob; the name cut at its '$' by the shell gets a hint.
"""
from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import DATA, REPO
from iree_kernels.check import runtime
from iree_kernels.core import toolchains
from max_pool_skeleton import OFFSET, remove_offset, scaffold_and_fill, squeezenet_project

RUN_MODULE = toolchains.iree_tool("iree-run-module") or "iree-run-module"
needs_onnx = pytest.mark.skipif(importlib.util.find_spec("onnx") is None, reason="no onnx")


@needs_onnx
@pytest.mark.vulkan
@pytest.mark.skipif("vulkan" not in runtime.available_drivers(RUN_MODULE),
                    reason="no Vulkan device (./setup.sh installs lavapipe)")
def test_a_glsl_skeleton_filled_at_its_todo_matches_iree_and_fails_without_its_offset(project):
    squeezenet_project(project, ["vulkan"])
    kernel = scaffold_and_fill(project, "glsl")
    assert f"binding 1: read-write writeonly 64x55x55xf32 at byte offset {OFFSET}" in kernel.read_text()

    verified = project.scons("verify", "IREE_TARGETS=vulkan")
    assert "matched IREE's executable on vulkan" in verified.stdout

    remove_offset(kernel, "glsl")
    failed = project.scons("verify", "IREE_TARGETS=vulkan", expect_ok=False)
    assert failed.returncode != 0
    assert "differential check failed for squeezenet/vulkan" in failed.output
    assert f"binding 1 (output 64x55x55xf32 at byte {OFFSET})" in failed.output


@needs_onnx
@pytest.mark.skipif(toolchains.nvcc() is None, reason="no nvcc (./setup.sh installs one)")
def test_cuda_dump_and_scaffold_work_where_codegen_fails_on_other_executables(project):
    squeezenet_project(project, ["cuda"])
    kernel = scaffold_and_fill(project, "cuda")
    listing = project.read("build/cuda/squeezenet/dump/executables.txt")
    sources = project.read("build/cuda/squeezenet/executables.mlir")
    assert listing.count("\n  export ") == sources.count("hal.executable.export ")
    failing = listing.count("codegen fails   IREE's cuda codegen: ")
    assert failing > 0 and f"IREE's cuda codegen fails for {failing} of" in listing
    assert "failed to distribute" in listing
    assert (project.root / "build/cuda/squeezenet/dump/codegen-errors.log").is_file()
    assert f"binding1 = (float*)((char*)binding1 + {OFFSET});" in kernel.read_text()

    built = project.scons("verify", "IREE_TARGETS=cuda")
    assert "no 'cuda' device on this machine" in built.stdout
    plans = sorted((project.root / "build/cuda/squeezenet/verify").glob("*.verify.json"))
    assert len(plans) == 1
    assert plans[0].with_name(plans[0].name.replace(".verify.json", ".kernel.vmfb")).is_file()
    # Where the codegen fails, the skeleton is wrapped, with a launch shape of its own.
    failed = re.search(r"^(\S+)\n(?:  .*\n)*?  codegen fails   IREE's cuda codegen: ", listing,
                       re.M).group(1)
    made = project.scons(f"SCAFFOLD=squeezenet/cuda/{failed}", "LANGUAGE=cuda", "scaffold")
    assert "scaffold: wrote kernels/cuda/" in made.stdout
    entry = project.read("kernels/scaffolded.toml").rsplit("[[substitutions]]", 1)[1]
    assert f'executable = "{failed}"' in entry and 'mode = "wrapped"' in entry
    assert "workgroup_size = [64]" in entry


@needs_onnx
def test_without_the_codegen_cache_a_codegen_failure_names_model_target_and_exports(project):
    squeezenet_project(project, ["cuda"])
    build = project.scons("-k", "IREE_TARGETS=cuda", "EXECUTABLE_CACHE=0", expect_ok=False)
    assert build.returncode != 0
    errors = [line for line in build.output.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, build.output[-3000:]
    assert errors[0].startswith("scons: *** [build/cuda/squeezenet.vmfb] IREE's cuda codegen "
                                "fails for ")
    assert "of model 'squeezenet': squeezenet$async_dispatch_" in errors[0]
    assert "(export squeezenet$async_dispatch_" in errors[0]
    assert "failed to distribute" in errors[0]
    assert errors[0].endswith("IREE's errors: build/cuda/squeezenet/compile-errors.log")
    # The IR IREE prints with its errors is in the log, not in the build's output.
    log = project.read("build/cuda/squeezenet/compile-errors.log")
    assert "func.func" in log and len(build.output) < 20_000 < len(log)


def test_scaffold_names_an_executable_by_number_or_export_glob_and_hints_at_a_cut_name(project):
    # Named as ONNX and torch models' executables are: after the model's function, with '$'.
    project.write("models/mlp.mlir", (REPO / "models/mlp.mlir").read_text()
                  .replace("func.func @main(", 'func.func @"mlp$async"('))
    project.write("kernels/models.toml", '[models.mlp]\nsource = "models/mlp.mlir"\n'
                  'targets = ["llvm-cpu"]\n')
    cut = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/mlp", expect_ok=False)
    assert cut.returncode != 0
    assert ("SCAFFOLD: model 'mlp' has no executable 'mlp' for target 'llvm-cpu'; the shell "
            "expands an unquoted '$', so 'mlp' may be 'mlp$async_dispatch_0' cut short: quote "
            "it (SCAFFOLD='mlp/llvm-cpu/mlp$async_dispatch_0') or name the executable by its "
            "number (SCAFFOLD=mlp/llvm-cpu/0); its executables: mlp$async_dispatch_0, "
            "mlp$async_dispatch_1") in cut.output

    by_number = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/1", "LANGUAGE=c")
    kernel = "kernels/llvm-cpu/mlp_async_dispatch_1.c"       # the model once
    assert f"scaffold: wrote {kernel} for executable mlp$async_dispatch_1" in by_number.stdout
    entry = project.read("kernels/scaffolded.toml")
    assert 'executable = "mlp$async_dispatch_1"' in entry and f'file = "{kernel}"' in entry

    by_export = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/*_matmul_*", "LANGUAGE=mlir")
    assert "scaffold: wrote kernels/llvm-cpu/mlp_async_dispatch_0.mlir for executable " \
           "mlp$async_dispatch_0" in by_export.stdout
    none = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/7", expect_ok=False)
    assert "SCAFFOLD: model 'mlp' has no executable numbered 7 (named *_dispatch_7)" in none.output
    project.scons()                                   # both scaffolds build and pass as written


def test_a_skeleton_says_what_to_compute_and_builds_as_generated(project):
    # A conv whose bias IREE folds into the executable and whose output lands inside the
    # zero padding the next conv reads.
    project.copy(DATA / "models/convpad.mlir", "models/convpad.mlir")
    project.write("kernels/models.toml", '[models.convpad]\nsource = "models/convpad.mlir"\n'
                  'targets = ["llvm-cpu"]\n')
    project.scons("scaffold", "SCAFFOLD=convpad/llvm-cpu/1")
    text = project.read("kernels/llvm-cpu/convpad_main_dispatch_1.c")
    assert "//   %4 = binding 1 (readonly 4x4x3x3xf32 at byte offset 0)" in text
    assert "//     %9 = arith.mulf %in, %in_1 : f32" in text            # the conv's body
    assert "//   %cst_0 : tensor<4xf32> = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, " \
           "4.000000e-01]> (4 values" in text
    assert "//   binding 2 (readwrite 4x10x10xf32 at byte offset 1600): %8 goes in " \
           "[0:4, 1:9, 1:9]" in text
    build = project.scons()
    assert build.ran("CC") == ["kernels/llvm-cpu/convpad_main_dispatch_1.c"]
