"""Triton kernels on a real GPU: saxpy and mlp's matmul as Triton kernels in cuda modules.

Marked ``gpu``. The project (build/triton-gpu/: its own SConstruct, models and
kernels/triton/*.py) is built where triton and iree-compile are installed, with
``scons verify``; a GPU machine without triton runs what was built here and carried:
``PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_triton_on_gpu.py``.
Each module's outputs are compared with numpy's, and each kernel with IREE's own
executable on the same bytes (the differential checks' plans).
"""
from __future__ import annotations

import importlib.util
import shutil
import sys

import pytest

from conftest import REPO, SCONS, run_module
from harness import scons
from cuda_models import NEEDS_CUDA, verify_plans
from iree_kernels.core import toolchains

ROOT = REPO / "build/triton-gpu"
MANIFEST = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["cuda"]

[models.mlp]
source = "models/mlp.mlir"
targets = ["cuda"]

[[substitutions]]
model = "saxpy"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/saxpy.py"
constexprs = { BLOCK = 1024 }
workgroup_count = ["ceildiv(w0, 1024)"]

[[substitutions]]
model = "mlp"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/mlp_matmul.py"
function = "matmul"
constexprs = { M = 4, N = 16, K = 8, BLOCK_M = 16, BLOCK_N = 16, BLOCK_K = 16 }
workgroup_count = [1]
"""


def build() -> None:
    """The project, its modules and its verification plans; where triton is missing, the
    build carried from a machine that has it."""
    if importlib.util.find_spec("triton") is None or not toolchains.iree_compile() \
            or not SCONS.exists():
        if not (ROOT / "build/cuda/saxpy.vmfb").is_file():
            pytest.fail(f"no triton here and nothing built in {ROOT}: run "
                        "'PYTHONPATH=tests:site_scons ./setup.sh python "
                        "tests/gpu/test_triton_on_gpu.py' where triton is, and carry build/")
        return
    (ROOT / "models").mkdir(parents=True, exist_ok=True)
    (ROOT / "kernels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "SConstruct", ROOT / "SConstruct")
    for name in ("saxpy.mlir", "mlp.mlir"):
        shutil.copyfile(REPO / "models" / name, ROOT / "models" / name)
    for name in ("saxpy.py", "mlp_matmul.py"):
        shutil.copyfile(REPO / "kernels/triton" / name, ROOT / "kernels" / name)
    (ROOT / "kernels/demo.toml").write_text(MANIFEST)
    made = scons(ROOT, "IREE_TARGETS=cuda", "modules", "verify")
    print(made.stdout)
    assert made.ok, made.failure()


if __name__ == "__main__":
    build()
    sys.exit(0)

pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def built():
    build()


def test_triton_saxpy_runs():
    n = 5000                                   # not a multiple of BLOCK: the mask works
    out = run_module(ROOT / "build/cuda/saxpy.vmfb", "cuda", "main", [f"{n}xf32=3", f"{n}xf32=1"])
    values = [float(v) for v in out.split("=", 1)[1].split()]
    assert values == [7.0] * n


def test_triton_matmul_runs():
    out = run_module(ROOT / "build/cuda/mlp.vmfb", "cuda", "main",
                     ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1"])
    assert [float(v) for v in out.split("=", 1)[1].split()] == [48.0] * 4


# saxpy's dispatch has a dynamic length, so IREE dumps no benchmark to verify it against;
# test_triton_saxpy_runs checks its outputs instead.
@pytest.mark.parametrize("model", ["mlp"])
def test_triton_kernel_matches_iree(model, tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)                   # the plans name modules relative to it
    plans = sorted((ROOT / "build/cuda" / model / "verify").glob("*.verify.json"))
    assert plans, f"no verification plan for {model}"
    assert not verify_plans(plans, tmp_path)
