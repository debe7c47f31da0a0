"""The three workflows: dump-edit-relink, kernel scaffolding, microbenchmarks."""
from __future__ import annotations

import importlib.util
import json
import re

import pytest

from conftest import REPO, run_module
from iree_kernels.core import toolchains

MANIFEST = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan", "cuda"]
"""
INPUTS = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]


@pytest.fixture
def mlp(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/models.toml", MANIFEST)
    return project


def test_dump_lists_each_executable_and_writes_its_sources(mlp):
    build = mlp.scons("dump", "IREE_TARGETS=cuda", "DUMP=sources,binaries")
    listing = mlp.read("build/cuda/mlp/dump/executables.txt")
    assert listing == build.stdout[build.stdout.index("# Executables"):].split("(files in")[0]
    assert "main_dispatch_1\n  export          main_dispatch_1_reduction_4x16_f32\n" in listing
    assert "  binding 1       read-only  readonly 16xf32 at byte offset 0\n" in listing
    assert "  binding 2       read-write writeonly 4xf32 at byte offset 0\n" in listing
    assert "  push constants  0 (32-bit)\n" in listing
    assert "  workgroup size  32x1x1\n" in listing
    dumped = mlp.root / "build/cuda/mlp/dump"
    assert sorted(p.name for p in (dumped / "sources").iterdir()) == \
        ["module_main_dispatch_0.mlir", "module_main_dispatch_1.mlir"]
    assert any(p.suffix == ".ptx" for p in (dumped / "binaries").iterdir())
    mlp.scons("-c")
    assert not dumped.exists()


def test_dumped_source_edited_and_relinked(mlp):
    mlp.scons("dump", "IREE_TARGETS=llvm-cpu")
    dumped = mlp.read("build/llvm-cpu/mlp/dump/sources/module_main_dispatch_1.mlir")
    edited = dumped.replace("%10 = arith.addf %9, %out : f32",
                            "%sq = arith.mulf %9, %9 : f32\n          %10 = arith.addf %sq, %out : f32")
    assert edited != dumped
    mlp.write("kernels/llvm-cpu/square.mlir", edited)
    mlp.write("kernels/models.toml", MANIFEST + """
[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/llvm-cpu/square.mlir"
""")
    mlp.scons("IREE_TARGETS=llvm-cpu")
    assert run_module(mlp.root / "build/llvm-cpu/mlp.vmfb", "local-sync", "main", INPUTS) == \
        "4xf32=344 344 344 344"


@pytest.mark.parametrize("language, target, executable, needs", [
    ("cuda", "cuda", "main_dispatch_0", "nvcc"),
    ("glsl", "vulkan", "main_dispatch_1", "glslangValidator"),
    ("c", "llvm-cpu", "main_dispatch_1", "clang"),
    ("mlir", "llvm-cpu", "main_dispatch_0", None),
    ("triton", "cuda", "main_dispatch_1", "triton"),
])
def test_scaffolded_kernel_builds_as_generated(mlp, language, target, executable, needs):
    if needs == "nvcc" and toolchains.nvcc() is None or needs == "triton" and \
            (importlib.util.find_spec("triton") is None or toolchains.ptxas() is None) or \
            needs not in (None, "nvcc", "triton") and toolchains.on_path(needs) is None:
        pytest.skip(f"no {needs}")
    build = mlp.scons("scaffold", f"SCAFFOLD=mlp/{target}/{executable}", f"LANGUAGE={language}")
    suffix = {"cuda": ".cu", "glsl": ".glsl", "c": ".c", "mlir": ".mlir", "triton": ".py"}[language]
    kernel = f"kernels/{target}/mlp_{executable}{suffix}"
    assert f"scaffold: wrote {kernel}" in build.stdout
    assert f'file = "{kernel}"' in mlp.read("kernels/scaffolded.toml")
    assert re.search(r'^fingerprint = "sha256:[0-9a-f]{16}" ', mlp.read("kernels/scaffolded.toml"),
                     re.M)
    if language != "mlir":
        assert "Layout (the kernel's parameters, in order):" in mlp.read(kernel)
    rebuild = mlp.scons(f"IREE_TARGETS={target}")        # every check passes
    assert f"build/{target}/mlp.vmfb" in rebuild.made_modules()
    again = mlp.scons("scaffold", f"SCAFFOLD=mlp/{target}/{executable}", f"LANGUAGE={language}",
                      expect_ok=False)
    assert f"{kernel} exists already" in again.output


def test_scaffold_refuses_a_language_of_another_target(mlp):
    build = mlp.scons("scaffold", "SCAFFOLD=mlp/vulkan/main_dispatch_0", "LANGUAGE=cuda",
                      expect_ok=False)
    assert "LANGUAGE=cuda writes kernels for target 'cuda', not 'vulkan'" in build.output


def test_bench_times_substituted_and_generated_executables(mlp):
    mlp.copy(REPO / "kernels/llvm-cpu/mlp_square_relu.mlir", "kernels/llvm-cpu/square.mlir")
    mlp.write("kernels/models.toml", MANIFEST + """
[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/llvm-cpu/square.mlir"
""")
    build = mlp.scons("bench", "IREE_TARGETS=llvm-cpu",
                      "IREE_BENCHMARKFLAGS=--benchmark_repetitions=2 --benchmark_min_time=1x --batch_size=10")
    assert "model  target    executable       kernel" in build.stdout
    results = json.loads(mlp.read("build/bench/microbenchmarks.json"))
    assert [(r["model"], r["executable"]) for r in results] == [("mlp", "main_dispatch_1")]
    assert results[0]["plain_us"] > 0 and results[0]["substituted_us"] > 0
    assert (mlp.root / "build/bench/microbenchmarks.png").read_bytes()[:4] == b"\x89PNG"
    # Again: the same kernel, executable and flags keep their timing; REMEASURE=yes times again.
    (kept,) = (mlp.root / "build/llvm-cpu/mlp/microbenchmarks.measured").glob("*/result.json")
    timed = kept.stat().st_mtime_ns
    mlp.scons("bench", "IREE_TARGETS=llvm-cpu",
              "IREE_BENCHMARKFLAGS=--benchmark_repetitions=2 --benchmark_min_time=1x --batch_size=10")
    assert json.loads(mlp.read("build/bench/microbenchmarks.json")) == results
    assert kept.stat().st_mtime_ns == timed
    mlp.scons("bench", "IREE_TARGETS=llvm-cpu", "REMEASURE=yes",
              "IREE_BENCHMARKFLAGS=--benchmark_repetitions=2 --benchmark_min_time=1x --batch_size=10")
    assert kept.stat().st_mtime_ns != timed
