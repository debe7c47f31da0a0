"""CUDA modules run on a real GPU: every demo model's cuda module against its expected outputs.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device. Builds the
cuda modules with scons where iree-compile is installed; elsewhere (a GPU
machine carrying only the runtime) it runs the modules already in build/cuda.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SCONS
from iree_kernels import checks, runtime, toolchains
from iree_kernels.manifest import load_project

RUN_MODULE = toolchains.iree_tool("iree-run-module") or "iree-run-module"
pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif("cuda" not in runtime.available_drivers(RUN_MODULE),
                       reason="no CUDA device (iree-run-module --list_devices)"),
]


def cuda_models():
    project = load_project(REPO, sorted((REPO / "kernels").glob("**/*.toml")))
    return [m for m in project.models.values() if "cuda" in m.targets and m.expected]


@pytest.fixture(scope="module", autouse=True)
def cuda_modules():
    if toolchains.iree_compile() and SCONS.exists():
        subprocess.run([str(SCONS), "-Q", "IREE_TARGETS=cuda"], cwd=REPO, check=True)


@pytest.mark.parametrize("model", cuda_models(), ids=lambda m: m.name)
def test_cuda_module_matches_expected_outputs(model):
    module = REPO / "build" / "cuda" / f"{model.name}.vmfb"
    if not module.exists():
        pytest.fail(f"{module} is not built: run scons IREE_TARGETS=cuda first")
    cases = checks.load_cases(str(REPO / model.expected), "cuda")
    assert cases
    for case in cases:
        output = checks.run_case(case, RUN_MODULE, str(module), "cuda", model.expected,
                                 cwd=str(REPO))
        print(output)
        assert "[SUCCESS]" in output
