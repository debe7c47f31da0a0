"""Differential checks on a real GPU: each demo kernel for cuda, and for vulkan on NVIDIA's driver,
against IREE's own executable, dispatched once each on the same bytes.

Marked ``gpu``. Where iree-compile is installed, the harness modules are built
here with ``scons verify IREE_TARGETS=cuda,vulkan``; a GPU machine carrying only
the runtime runs the plans already in build/ (build them first with
``PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/cuda_models.py``).
"""
from __future__ import annotations

import pytest

from conftest import REPO
from cuda_models import (IREE_WRONG_ON_NVIDIA_VULKAN, NEEDS_CUDA, RUN_MODULE,
                         build_verification_plans)
from iree_kernels.check import runtime, verification

NEEDS_VULKAN = pytest.mark.skipif("vulkan" not in runtime.available_drivers(RUN_MODULE),
                                  reason="no Vulkan device (iree-run-module --list_devices)")
# What a plan may say instead of running: both are reasons the check cannot exist.
REASONS = ("IREE dumps no benchmark", "IREE cannot compile")


def _plans(target: str) -> list:
    return sorted(REPO.glob(f"build/{target}/*/verify/*.verify.json"))


@pytest.fixture(scope="module", autouse=True)
def plans():
    build_verification_plans()


def _check(path, device: str, tmp_path) -> None:
    plan = verification.from_json(path.read_text(), str(path))
    if plan.note:
        assert plan.note.startswith(REASONS), plan.note
        pytest.skip(plan.note)
    wrong = verification.run(plan, RUN_MODULE, device, tmp_path)
    print(f"{verification.describe(plan)} on {device}: {wrong or 'matched'}")
    assert wrong is None


@pytest.mark.parametrize("path", [pytest.param(p, marks=NEEDS_CUDA) for p in _plans("cuda")],
                         ids=lambda p: p.parent.parent.name)
def test_cuda_kernel_matches_iree(path, tmp_path):
    _check(path, "cuda", tmp_path)


@pytest.mark.gpu
@NEEDS_VULKAN
@pytest.mark.parametrize("path", [
    pytest.param(p, marks=[IREE_WRONG_ON_NVIDIA_VULKAN] if p.parent.parent.name == "squeezenet"
                 else []) for p in _plans("vulkan")], ids=lambda p: p.parent.parent.name)
def test_vulkan_kernel_matches_iree(path, tmp_path):
    _check(path, "vulkan", tmp_path)
