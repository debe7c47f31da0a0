"""On a GPU: a CUDA skeleton scaffolded for squeezenet's first max pool, filled in only at its TODO,
matches IREE's executable in the differential check; without its binding offset it does not.

Marked ``gpu``; needs iree-compile and nvcc beside the GPU (the project is
built here, in a temporary folder). tests/e2e/test_scaffolded_kernels.py does
the same on lavapipe and builds these harnesses on machines without a GPU.
"""
from __future__ import annotations

import pytest

from cuda_models import NEEDS_CUDA, RUN_MODULE
from iree_kernels import toolchains, verification
from max_pool_skeleton import OFFSET, remove_offset, scaffold_and_fill, squeezenet_project

pytest.importorskip("onnx")
pytestmark = [*NEEDS_CUDA, pytest.mark.skipif(
    toolchains.nvcc() is None or toolchains.iree_compile() is None,
    reason="needs nvcc and iree-compile to build the harnesses")]


def _check(project, tmp_path) -> str | None:
    # With the GPU here scons runs the check itself (and fails where the kernel is wrong);
    # the plan is run again below, as a runtime-only machine would.
    build = project.scons("verify", "IREE_TARGETS=cuda", expect_ok=False)
    paths = list((project.root / "build/cuda/squeezenet/verify").glob("*.verify.json"))
    assert len(paths) == 1, build.output
    path, = paths
    plan = verification.from_json(path.read_text(), str(path))
    assert not plan.note, plan.note
    wrong = verification.run(plan, RUN_MODULE, "cuda", tmp_path)
    print(f"{verification.describe(plan)} on cuda: {wrong or 'matched'}")
    return wrong


def test_a_cuda_skeleton_filled_at_its_todo_matches_iree_and_fails_without_its_offset(
        project, tmp_path):
    squeezenet_project(project, ["cuda"])
    kernel = scaffold_and_fill(project, "cuda")
    assert _check(project, tmp_path / "filled") is None
    remove_offset(kernel, "cuda")
    wrong = _check(project, tmp_path / "without-offset")
    assert wrong and f"binding 1 (output 64x55x55xf32 at byte {OFFSET})" in wrong
