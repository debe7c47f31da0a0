"""On a GPU: a CUDA skeleton scaffolded for squeezenet's first max pool, filled in only at its TODO,
matches IREE's executable in the differential check; without its binding offset it does not.

Marked ``gpu``. Where iree-compile and nvcc are installed, both harnesses are
built with scons in temporary folders; a GPU machine carrying only the runtime
runs the plans already built into build/scaffolded-gpu/ (here, with the
compilers, by

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_scaffolded_on_gpu.py

then carry build/ there). tests/e2e/test_scaffolded_kernels.py does the same
on lavapipe and builds these harnesses on machines without a GPU.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REPO, Project
from cuda_models import NEEDS_CUDA, RUN_MODULE
from iree_kernels.core import toolchains
from iree_kernels.check import verification
from max_pool_skeleton import OFFSET, remove_offset, scaffold_and_fill, squeezenet_project

pytestmark = NEEDS_CUDA
CARRIED = REPO / "build/scaffolded-gpu"


def build_plan(root: Path, with_offset: bool) -> Path:
    """The differential-check plan of the filled skeleton (or of it without its offset)."""
    shutil.rmtree(root, ignore_errors=True)
    project = Project(root)
    squeezenet_project(project, ["cuda"])
    kernel = scaffold_and_fill(project, "cuda")
    if not with_offset:
        remove_offset(kernel, "cuda")
    # Where the GPU is here too, scons runs the check itself (and fails on the wrong kernel).
    build = project.scons("verify", "IREE_TARGETS=cuda", expect_ok=False)
    paths = list((root / "build/cuda/squeezenet/verify").glob("*.verify.json"))
    assert len(paths) == 1, build.output
    return paths[0]


def _plan(name: str, tmp_path: Path) -> Path:
    if toolchains.nvcc() and toolchains.iree_compile():
        pytest.importorskip("onnx")
        return build_plan(tmp_path / name, with_offset=name == "filled")
    found = list((CARRIED / name).glob("build/cuda/squeezenet/verify/*.verify.json"))
    if not found:
        pytest.fail(f"{CARRIED / name} holds no plan: see this file's docstring")
    return found[0]


def _run(path: Path, tmp_path: Path) -> str | None:
    plan = verification.from_json(path.read_text(), str(path))
    assert not plan.note, plan.note
    root = path.parents[4]                 # the project: plans name modules relative to it
    plan.iree_module, plan.kernel_module = (str(root / m) for m in (plan.iree_module,
                                                                     plan.kernel_module))
    wrong = verification.run(plan, RUN_MODULE, "cuda", tmp_path)
    print(f"{verification.describe(plan)} on cuda: {wrong or 'matched'}")
    return wrong


def test_a_cuda_skeleton_filled_at_its_todo_matches_iree(tmp_path):
    assert _run(_plan("filled", tmp_path), tmp_path / "work") is None


def test_without_its_offset_it_fails_saying_where(tmp_path):
    wrong = _run(_plan("without-offset", tmp_path), tmp_path / "work")
    assert wrong and f"binding 1 (output 64x55x55xf32 at byte {OFFSET})" in wrong


if __name__ == "__main__":
    for name in ("filled", "without-offset"):
        print(build_plan(CARRIED / name, with_offset=name == "filled"))
