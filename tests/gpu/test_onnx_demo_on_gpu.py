"""The demo's ONNX networks (kernels/onnx.toml) on an NVIDIA GPU: Vulkan with the hand kernels, and CUDA.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device (so not on
lavapipe). Where iree-compile is installed it builds, with scons, the Vulkan
modules (squeezenet with its GLSL max pool, alexnet with its GLSL LRN) and
alexnet's CUDA module (IREE's own: it cannot compile squeezenet for CUDA),
and beside them IREE's plain modules of the same models with the same
options (no substitution) into build/plain-onnx. Elsewhere (a GPU machine
carrying only the runtime) it runs what is in build/; build it here first:

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_onnx_demo_on_gpu.py

then carry build/ and run ``python3 -m pytest tests/gpu/test_onnx_demo_on_gpu.py``
there (the Vulkan loader brought along as for the other GPU tests).

Per module: the hand-kernel module computes what the plain module computes on
the same device, within the case's tolerance; and it matches the expected
outputs (IREE's llvm-cpu results; squeezenet's case, limited to llvm-cpu
because lavapipe is too slow for it, is run on Vulkan here too).
"""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, SCONS, case_outputs
from cuda_models import IREE_WRONG_ON_NVIDIA_VULKAN, NEEDS_CUDA, RUN_MODULE, build_repo
from iree_kernels.check import expected_outputs, runtime
from iree_kernels.core import toolchains
from iree_kernels.check.comparison import mismatch
from iree_kernels.project.manifest import load_project

MANIFEST = REPO / "kernels/onnx.toml"
PLAIN = REPO / "build/plain-onnx"
GPU_TARGETS = ("vulkan", "cuda")
pytestmark = NEEDS_CUDA


def modules() -> list[tuple[str, str]]:
    """(model, target) of every ONNX demo module for the GPU targets."""
    project = load_project(REPO, [MANIFEST])
    return [(m.name, t) for m in project.models.values() for t in GPU_TARGETS if t in m.targets]


def build() -> None:
    if not (toolchains.iree_compile() and SCONS.exists()):
        return
    build_repo(f"IREE_TARGETS={','.join(GPU_TARGETS)}", f"MANIFESTS={MANIFEST.relative_to(REPO)}")
    for model, target in modules():
        out = PLAIN / target / f"{model}.vmfb"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([toolchains.iree_compile(), f"build/models/{model}.mlir",
                        f"@build/{target}/{model}/options.flags", "-o", str(out)],
                       cwd=REPO, check=True, capture_output=True)


def the_case(model: str) -> expected_outputs.Case:
    cases = expected_outputs.load_cases(str(REPO / f"models/{model}.expected.toml"))
    assert len(cases) == 1
    return cases[0]


def needs_device(target: str):
    return pytest.mark.skipif(runtime.device_driver(target) not in
                              runtime.available_drivers(RUN_MODULE), reason=f"no {target} device")


PARAMS = [pytest.param(m, t, id=f"{m}-{t}", marks=[needs_device(t)] + (
              [IREE_WRONG_ON_NVIDIA_VULKAN] if (m, t) == ("squeezenet", "vulkan") else []))
          for m, t in modules()]


@pytest.fixture(scope="module", autouse=True)
def built():
    build()


def module_of(folder, target, model):
    module = folder / target / f"{model}.vmfb"
    if not module.exists():
        pytest.fail(f"{module} is not built: see this file's docstring")
    return module


@pytest.mark.parametrize("model,target", PARAMS)
def test_the_module_computes_what_iree_plain_module_does_on_the_same_device(model, target, tmp_path):
    case = the_case(model)
    out = tmp_path / "out.npy"
    built, plain = (case_outputs(RUN_MODULE, module_of(folder, target, model), case, target, out,
                                 REPO) for folder in (REPO / "build", PLAIN))
    for a, b in zip(built, plain):
        print(f"{model} on {target}: {a.ravel()[:2]} (plain: {b.ravel()[:2]})")
        assert mismatch(a, b, case.tolerance) is None, mismatch(a, b, case.tolerance)


@pytest.mark.parametrize("model,target", PARAMS)
def test_the_module_matches_the_expected_outputs(model, target):
    case = the_case(model)
    print(expected_outputs.run_case(case, RUN_MODULE, str(module_of(REPO / "build", target, model)), target,
                          f"models/{model}.expected.toml", cwd=str(REPO)))


if __name__ == "__main__":
    build()
