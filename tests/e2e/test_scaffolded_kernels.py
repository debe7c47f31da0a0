"""End to end: a skeleton scaffolded for a real-model dispatch, filled in only at its TODO, is right.

squeezenet's first max pool: its output lies 3,154,176 bytes into its buffer
and IREE launches it over a 3-D grid. The skeleton states and applies the
offset and covers the whole launch, so writing the computation at its TODO
passes the differential check (``scons verify``); without the offset it fails.
On CUDA, where IREE 3.13's codegen fails on other executables of the model,
dump and scaffold still work; the check's harnesses are built here and run on
a GPU by tests/gpu/test_scaffolded_on_gpu.py.
"""
from __future__ import annotations

import pytest

from iree_kernels import runtime, toolchains
from max_pool_skeleton import OFFSET, remove_offset, scaffold_and_fill, squeezenet_project

pytest.importorskip("onnx")
RUN_MODULE = toolchains.iree_tool("iree-run-module") or "iree-run-module"


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
