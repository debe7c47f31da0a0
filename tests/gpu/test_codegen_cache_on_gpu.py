"""CUDA modules as the build makes them, run on a real GPU beside iree-compile's own.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device. Where
iree-compile is installed it builds, with scons, the cuda modules as the build
makes them by default (front end once, through the codegen cache) into
build/cuda, without the cache into build/plain/cuda, and what iree-compile makes
of each model itself with the same flag files into build/reference/cuda.
Elsewhere (a GPU machine carrying only the runtime) it runs the modules already
there; build them first with

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/cuda_models.py

For every cuda model with expected outputs, the built modules match them and
compute bit for bit what iree-compile's own module computes.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO, case_outputs
from cuda_models import NEEDS_CUDA, REFERENCE, RUN_MODULE, build_cuda_modules, cuda_models
from iree_kernels.check import expected_outputs

PLAIN = REPO / "build/plain"
pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def cuda_modules():
    build_cuda_modules("EXECUTABLE_CACHE=cuda")
    build_cuda_modules("EXECUTABLE_CACHE=0", f"BUILD_DIR={PLAIN.relative_to(REPO)}")


@pytest.mark.parametrize("model", cuda_models(), ids=lambda m: m.name)
def test_built_modules_compute_what_iree_compiles_own_does(model, tmp_path):
    reference, plain, cached = (folder / "cuda" / f"{model.name}.vmfb"
                                for folder in (REFERENCE, PLAIN, REPO / "build"))
    for module in (reference, plain, cached):
        if not module.exists():
            pytest.fail(f"{module} is not built: see this file's docstring")
    # ASSEMBLE's program, the module's (linked) or the unlinked one it relinks (RELINK).
    assert any((REPO / f"build/cuda/{model.name}/{folder}/{model.name}.mlir").is_file()
               for folder in ("module", "unlinked")), \
        f"{cached} was not built through the codegen cache"
    cases = expected_outputs.load_cases(str(REPO / model.expected), "cuda")
    assert cases
    for case in cases:
        print(expected_outputs.run_case(case, RUN_MODULE, str(cached), "cuda", model.expected,
                              cwd=str(REPO)))
        out = tmp_path / f"{model.name}.npy"
        expected = case_outputs(RUN_MODULE, reference, case, "cuda", out, REPO)
        for module in (plain, cached):
            for a, b in zip(expected, case_outputs(RUN_MODULE, module, case, "cuda", out, REPO)):
                assert a.dtype == b.dtype and np.array_equal(a, b), module
