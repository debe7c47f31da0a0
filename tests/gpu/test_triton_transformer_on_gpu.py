"""The demo of Triton kernels: the hottest matmul of a transformer block replaced by Triton on CUDA.

Marked ``gpu``. The model is bench/corpus.py's torch_transformer written with
``--scale 8 --tokens 2048`` (d = 512, 4 heads of 128, 2048 tokens; 12.6 MB of
weights): at the corpus's default 16 tokens its matmuls have 16 rows, too small
for any kernel to matter. Its hottest matmul on llvm-cpu (``scons hotspots``) is
main$async_dispatch_8, the attention scores q @ k^T / sqrt(128)
(batch_matmul_4x2048x2048x128_f32); kernels/triton/attention_scores.py replaces
it, compiled for sm_90a (wgmma, 3xTF32) inside IREE's sm_80 module.

Built where triton and iree-compile are (the GPU machine has neither):

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_triton_transformer_on_gpu.py

builds the project in build/triton-transformer/ (scons modules, verify,
microbenchmarks, hotspots; the module without the kernel beside it; the
microbenchmarks of two other tile shapes with BUILD_DIR=build/tiles-*) and copies
what the GPU run needs, 30 MB, into build/triton-transformer-gpu/; carry that
folder. On the GPU machine the tests run the verification plan, the kernel's and
IREE's microbenchmarks (the other tile shapes' beside them), the model's hotspots
(IREE's own executables, the substituted one named) and the model end to end with
and without the kernel, printing the figures.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO, SCONS
from cuda_models import BENCHMARK_MODULE, NEEDS_CUDA, RUN_MODULE, copy_carried, verify_plans
from harness import scons
from iree_kernels.check import benchmarks
from iree_kernels.perf import hotspot_report, hotspots
from iree_kernels.core import toolchains

ROOT = REPO / "build/triton-transformer"
GPU = REPO / "build/triton-transformer-gpu"       # what the GPU run needs, paths as under ROOT
MODEL = "torch_transformer"
CORPUS = ["--only", MODEL, "--scale", "8", "--tokens", "2048"]
INPUT = f"models/{MODEL}/input0.npy"
WITH_KERNEL, WITHOUT = f"build/cuda/{MODEL}.vmfb", f"build/plain/{MODEL}.vmfb"
HOTSPOTS = f"build/cuda/{MODEL}/hotspots.json"
GOAL = 2.0                  # the Triton kernel's speedup over IREE's own executable
# Tile shapes: (BLOCK_M, BLOCK_N, BLOCK_K, num_warps, num_stages). The first is the demo's,
# verified and held to GOAL; the others are only timed beside it (ptxas: no spills in any).
TILES = {"128x128x64": (128, 128, 64, 8, 2),  # K = 128 is two BLOCK_K steps: a third stage idles
         "64x128x64": (64, 128, 64, 4, 2),
         "128x128x32": (128, 128, 32, 8, 3)}
DEMO_TILES = "128x128x64"
MANIFEST = """
[models.{model}]
source = "models/{model}.pt2"
targets = ["cuda"]

[[substitutions]]
model = "{model}"
target = "cuda"
export = "*_batch_matmul_4x2048x2048x128_f32"     # q @ k^T / sqrt(128): main$async_dispatch_8
file = "kernels/attention_scores.py"
function = "scores"
arch = "sm_90a"
constexprs = {{ HEADS = 4, M = 2048, N = 2048, K = 128, Q_AT = 8388608, KT_AT = 4194304, \
OUT_AT = 12582912, SCALE = 11.3137083, BLOCK_M = {m}, BLOCK_N = {n}, BLOCK_K = {k}, GROUP_M = 8 }}
num_warps = {warps}
num_stages = {stages}
workgroup_count = [{tiles}, 4]  # (2048 / BLOCK_M) x (2048 / BLOCK_N) tiles, 4 heads
"""


def manifest(tiles: str) -> str:
    m, n, k, warps, stages = TILES[tiles]
    return MANIFEST.format(model=MODEL, m=m, n=n, k=k, warps=warps, stages=stages,
                           tiles=(2048 // m) * (2048 // n))


def variant_benchmarks(tiles: str) -> str:
    return f"build/tiles-{tiles}/cuda/{MODEL}/microbenchmarks.json"


def build() -> None:
    """The project, its plans and benchmarks, then GPU's copy; where triton or iree-compile is
    missing, the copy carried from a machine that has them."""
    if importlib.util.find_spec("triton") is None or not toolchains.iree_compile() \
            or not SCONS.exists():
        if not (GPU / WITH_KERNEL).is_file():
            pytest.fail(f"nothing built in {GPU}: run 'PYTHONPATH=tests:site_scons ./setup.sh "
                        "python tests/gpu/test_triton_transformer_on_gpu.py' where triton and "
                        "iree-compile are, and carry that folder")
        return
    for folder in ("models", "kernels"):
        (ROOT / folder).mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "SConstruct", ROOT / "SConstruct")
    if not (ROOT / f"models/{MODEL}.pt2").is_file():
        subprocess.run([sys.executable, "-m", "bench.corpus", str(ROOT / "models"),
                        *CORPUS, "--root", str(ROOT)], cwd=REPO, check=True, timeout=600)
    shutil.copyfile(REPO / "kernels/triton/attention_scores.py",
                    ROOT / "kernels/attention_scores.py")
    variants = []
    for tiles in TILES:
        if tiles == DEMO_TILES:
            continue
        (ROOT / "kernels/demo.toml").write_text(manifest(tiles))
        made = scons(ROOT, "IREE_TARGETS=cuda", f"BUILD_DIR=build/tiles-{tiles}", "microbenchmarks")
        assert made.ok, made.failure()
        variants += [variant_benchmarks(tiles), *(p.relative_to(ROOT) for p in (
            ROOT / variant_benchmarks(tiles)).with_suffix("").glob("*.vmfb"))]
    (ROOT / "kernels/demo.toml").write_text(manifest(DEMO_TILES))
    made = scons(ROOT, "IREE_TARGETS=cuda", "modules", "verify", "microbenchmarks", "hotspots")
    print(made.stdout)
    assert made.ok, made.failure()
    (ROOT / WITHOUT).parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([toolchains.iree_compile(), f"build/models/{MODEL}.mlir",
                    f"@build/cuda/{MODEL}/options.flags", "-o", WITHOUT],
                   cwd=ROOT, check=True, capture_output=True, timeout=1200)
    hot = hotspot_report.from_json((ROOT / HOTSPOTS).read_text())
    wanted = [WITH_KERNEL, WITHOUT, INPUT, f"build/cuda/{MODEL}/microbenchmarks.json", HOTSPOTS,
              *sorted({row.module for row in hot.rows if row.module}),
              *sorted({row.kernel_module for row in hot.rows if row.kernel_module}),
              *(p.relative_to(ROOT) for p in (ROOT / f"build/cuda/{MODEL}/verify").iterdir()),
              *(p.relative_to(ROOT) for p in
                (ROOT / f"build/cuda/{MODEL}/microbenchmarks").glob("*.vmfb")), *variants]
    copy_carried(ROOT, GPU, wanted)


if __name__ == "__main__":
    build()
    sys.exit(0)

pytestmark = NEEDS_CUDA


@pytest.fixture(scope="module", autouse=True)
def built():
    build()


@pytest.fixture
def at_gpu_root(monkeypatch):
    monkeypatch.chdir(GPU)                    # the plans and benchmarks name files relative to it


def test_the_triton_kernel_matches_iree(at_gpu_root, tmp_path):
    plans = sorted((GPU / f"build/cuda/{MODEL}/verify").glob("*.verify.json"))
    assert len(plans) == 1, plans
    assert not verify_plans(plans, tmp_path)


def test_the_model_computes_the_same_with_and_without_the_kernel(at_gpu_root, tmp_path):
    import numpy as np
    outputs = []
    for module in (WITH_KERNEL, WITHOUT):
        out = tmp_path / f"{Path(module).parent.name}.npy"
        subprocess.run([RUN_MODULE, f"--module={module}", "--device=cuda", "--function=main",
                        f"--input=@{INPUT}", f"--output=@{out}"], check=True, capture_output=True,
                       timeout=600)
        outputs.append(np.load(out))
    difference = float(np.max(np.abs(outputs[0] - outputs[1])))
    print(f"{MODEL}: largest difference with and without the Triton kernel: {difference:.3g}")
    np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-4)


def test_the_triton_kernel_is_faster_than_iree_and_the_model_too(at_gpu_root):
    results = benchmarks.from_json((GPU / f"build/cuda/{MODEL}/microbenchmarks.json").read_text())
    flags = ["--benchmark_repetitions=5", "--batch_size=20"]
    benchmarks.retime(results, BENCHMARK_MODULE, flags)
    print(benchmarks.table(results), end="")
    for tiles in TILES:                        # the other tile shapes, timed only
        if tiles != DEMO_TILES:
            variant, = benchmarks.from_json((GPU / variant_benchmarks(tiles)).read_text())
            benchmarks.retime([variant], BENCHMARK_MODULE, flags)
            print(f"tiles {tiles} (num_warps, num_stages {TILES[tiles][3:]}): IREE "
                  f"{variant.plain_us} us, Triton {variant.substituted_us} us "
                  f"({variant.speedup or 0:.2f}x); not verified")
    model_flags = ["--function=main", f"--input=@{INPUT}", "--benchmark_repetitions=5"]
    with_kernel, without = (benchmarks.time_per_dispatch(BENCHMARK_MODULE, Path(m), "cuda",
                                                         model_flags)
                            for m in (WITH_KERNEL, WITHOUT))
    print(f"{MODEL} end to end on cuda: {without:.1f} us with IREE's executables, "
          f"{with_kernel:.1f} us with the Triton kernel ({without / with_kernel:.2f}x)")
    result, = results
    assert result.speedup is not None, result.note
    print(f"goal: the kernel at least {GOAL}x IREE's executable: "
          f"{'met' if result.speedup >= GOAL else 'not met'} ({result.speedup:.2f}x)")
    assert result.speedup >= GOAL
    assert with_kernel < without


def test_hotspots_on_cuda_name_the_triton_kernel(at_gpu_root):
    report = hotspot_report.from_json((GPU / HOTSPOTS).read_text())
    hotspots.time(report, BENCHMARK_MODULE, report.flags.split(), True)
    print(hotspot_report.table(report), end="")
    row, = [r for r in report.rows if r.substituted_by]
    assert row.export.endswith("_batch_matmul_4x2048x2048x128_f32")
    assert row.substituted_by == "kernels/attention_scores.py"
    assert row.us_per_dispatch is not None, row.note
    assert row.kernel_us is not None and row.kernel_us < row.us_per_dispatch, row.note
