"""One CUDA module per architecture, each run on a real GPU against the expected outputs.

``CUDA_ARCH=sm_80,sm_89`` into build/archs: every demo model gets
build/archs/cuda-sm_80/<model>.vmfb and build/archs/cuda-sm_89/<model>.vmfb,
its kernels compiled by nvcc for that architecture. The PTX of both is
JIT-compiled by the driver on newer GPUs (an H200 is sm_90, which IREE 3.13 does
not target). Marked ``gpu``: skipped without a CUDA device. A runtime-only GPU
machine runs the modules carried in build/archs (tests/gpu/cuda_models.py builds them).
"""
from __future__ import annotations

import pytest

from conftest import REPO
from cuda_models import ARCHS, NEEDS_CUDA, RUN_MODULE, build_cuda_modules, cuda_models
from iree_kernels.check import expected_outputs

pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def modules():
    build_cuda_modules(f"CUDA_ARCH={','.join(ARCHS)}", "BUILD_DIR=build/archs")


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("model", cuda_models(), ids=lambda m: m.name)
def test_each_architectures_module_matches_expected_outputs(model, arch):
    module = REPO / "build/archs" / f"cuda-{arch}" / f"{model.name}.vmfb"
    if not module.exists():
        pytest.fail(f"{module} is not built: run python tests/gpu/cuda_models.py first")
    options = (module.parent / model.name / "options.flags").read_text()
    assert f"--iree-cuda-target={arch}" in options
    for case in expected_outputs.load_cases(str(REPO / model.expected), "cuda"):
        output = expected_outputs.run_case(case, RUN_MODULE, str(module), "cuda", model.expected,
                                 cwd=str(REPO))
        print(output)
        assert "expected output(s)" in output
