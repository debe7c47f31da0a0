"""On a GPU: a wrapped CUDA kernel, and one in object mode, relinked into the unlinked module (RELINK=yes) computes what the
module compiled whole (RELINK=no) does, before and after a kernel edit that only relinks.

Marked ``gpu``. Builds with scons, so it needs iree-compile and nvcc beside the
CUDA device (the GPU machine carries them: bench/gpu_machine.sh).
"""
from __future__ import annotations

import pytest

from conftest import Project, run_module
from cuda_models import NEEDS_CUDA
from iree_kernels.core import toolchains
from relink_projects import (SAXPY_KERNELS, SAXPY_OBJECT, assert_same_module, iree_compiles_own,
                             saxpy_object_on_cuda, saxpy_wrapped)

pytestmark = [*NEEDS_CUDA, pytest.mark.skipif(
    not (toolchains.nvcc() and toolchains.iree_compile()), reason="needs iree-compile and nvcc")]
INPUTS = ["4xf32=1 2 3 4", "4xf32=1 1 1 1"]


def test_a_relinked_cuda_module_computes_what_the_whole_compile_does(tmp_path):
    project = Project(tmp_path / "repo")
    saxpy_wrapped(project, ["cuda"])
    module = project.root / "build/cuda/saxpy.vmfb"
    project.scons("IREE_TARGETS=cuda", "RELINK=no")
    linked = run_module(module, "cuda", "main", INPUTS)
    project.scons("IREE_TARGETS=cuda", "RELINK=yes")
    assert_same_module(module.read_bytes(), iree_compiles_own(project, tmp_path / "own.vmfb",
                                                               "cuda", "saxpy"))
    assert run_module(module, "cuda", "main", INPUTS) == linked
    assert "3 5 7 9" in linked, linked

    kernel = project.root / SAXPY_KERNELS["cuda"][0]
    kernel.write_text(kernel.read_text().replace("2.0f", "3.0f", 1))
    edit = project.scons("IREE_TARGETS=cuda", "RELINK=yes")
    assert edit.ran("RELINK") == ["build/cuda/saxpy.vmfb"]
    assert not {"FRONTEND", "ASSEMBLE", "IREE"} & {s.step for s in edit.steps}, edit.output
    relinked = run_module(module, "cuda", "main", INPUTS)
    assert "4 7 10 13" in relinked, relinked
    project.scons("IREE_TARGETS=cuda", "RELINK=no")
    assert run_module(module, "cuda", "main", INPUTS) == relinked


def test_a_relinked_object_kernel_computes_what_the_whole_compile_does(tmp_path):
    project = Project(tmp_path / "repo")
    saxpy_object_on_cuda(project)
    module = project.root / "build/cuda/saxpy.vmfb"
    project.scons("IREE_TARGETS=cuda", "RELINK=no")
    linked = run_module(module, "cuda", "main", INPUTS)
    assert "3 5 7 9" in linked, linked
    project.scons("IREE_TARGETS=cuda", "RELINK=yes")
    assert run_module(module, "cuda", "main", INPUTS) == linked
    kernel = project.root / SAXPY_OBJECT
    kernel.write_text(kernel.read_text().replace("2.0f", "3.0f"))
    assert project.scons("IREE_TARGETS=cuda", "RELINK=yes").ran("RELINK") == [
        "build/cuda/saxpy.vmfb"]
    relinked = run_module(module, "cuda", "main", INPUTS)
    assert "4 7 10 13" in relinked, relinked
    project.scons("IREE_TARGETS=cuda", "RELINK=no")
    assert run_module(module, "cuda", "main", INPUTS) == relinked
