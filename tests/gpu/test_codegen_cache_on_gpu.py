"""CUDA modules built through the per-executable codegen cache, run on a real GPU beside plain ones.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device. Where
iree-compile is installed it builds, with scons, the cuda modules as the
build makes them by default, through the cache, into build/cuda and plain ones
into build/plain/cuda. Elsewhere (a GPU machine carrying only the runtime) it
runs the modules already there; build them first with

    ./setup.sh scons IREE_TARGETS=cuda EXECUTABLE_CACHE=cuda
    ./setup.sh scons IREE_TARGETS=cuda EXECUTABLE_CACHE=0 BUILD_DIR=build/plain

For every cuda model with expected outputs, the cached module matches them and
computes bit for bit what the plain module computes.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO, case_outputs
from cuda_models import NEEDS_CUDA, RUN_MODULE, build_cuda_modules, cuda_models
from iree_kernels import checks

PLAIN = REPO / "build/plain"
pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def cuda_modules():
    build_cuda_modules("EXECUTABLE_CACHE=cuda")
    build_cuda_modules("EXECUTABLE_CACHE=0", f"BUILD_DIR={PLAIN.relative_to(REPO)}")


@pytest.mark.parametrize("model", cuda_models(), ids=lambda m: m.name)
def test_cached_module_computes_what_the_plain_one_does(model, tmp_path):
    plain, cached = (folder / "cuda" / f"{model.name}.vmfb" for folder in (PLAIN, REPO / "build"))
    for module in (plain, cached):
        if not module.exists():
            pytest.fail(f"{module} is not built: see this file's docstring")
    assert (REPO / f"build/cuda/{model.name}/module/{model.name}.mlir").is_file(), \
        f"{cached} was not built through the codegen cache"
    cases = checks.load_cases(str(REPO / model.expected), "cuda")
    assert cases
    for case in cases:
        print(checks.run_case(case, RUN_MODULE, str(cached), "cuda", model.expected,
                              cwd=str(REPO)))
        out = tmp_path / f"{model.name}.npy"
        for a, b in zip(case_outputs(RUN_MODULE, plain, case, "cuda", out, REPO),
                        case_outputs(RUN_MODULE, cached, case, "cuda", out, REPO)):
            assert a.dtype == b.dtype and np.array_equal(a, b)
