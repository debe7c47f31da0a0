"""CUDA modules run on a real GPU: every demo model's cuda module against its expected outputs.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device. Builds the
cuda modules with scons where iree-compile is installed; elsewhere (a GPU
machine carrying only the runtime) it runs the modules already in build/cuda.
"""
from __future__ import annotations

import pytest

from conftest import REPO
from cuda_models import NEEDS_CUDA, RUN_MODULE, build_cuda_modules, cuda_models
from iree_kernels.check import expected_outputs

pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def cuda_modules():
    build_cuda_modules()


@pytest.mark.parametrize("model", cuda_models(), ids=lambda m: m.name)
def test_cuda_module_matches_expected_outputs(model):
    module = REPO / "build" / "cuda" / f"{model.name}.vmfb"
    if not module.exists():
        pytest.fail(f"{module} is not built: run scons IREE_TARGETS=cuda first")
    cases = expected_outputs.load_cases(str(REPO / model.expected), "cuda")
    assert cases
    for case in cases:
        output = expected_outputs.run_case(case, RUN_MODULE, str(module), "cuda", model.expected,
                                 cwd=str(REPO))
        print(output)
        assert "expected output(s)" in output
