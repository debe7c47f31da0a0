"""'scons hotspots' on a small llvm-cpu model: counts, ranking, the substituted mark, the files written."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from conftest import DATA, REPO, Project, made_once
from iree_kernels.check import runtime
from iree_kernels.core import toolchains

RUN_MODULE = toolchains.iree_tool("iree-run-module") or "iree-run-module"

MANIFEST = """
[models.net]
source = "models/net.mlir"
targets = ["llvm-cpu", "cuda"]

[[substitutions]]
model = "net"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/llvm-cpu/square.mlir"
"""
FAST = "IREE_HOTSPOTFLAGS=--benchmark_repetitions=3 --benchmark_min_time=0.02s --batch_size=10"


@pytest.fixture
def net(tmp_path_factory, tmp_path):
    """The model dumped, then one of its executables substituted by its own dumped source: made
    once per run, copied for each test."""
    def dump(folder):
        project = Project(folder)
        project.copy(DATA / "hotspots.mlir", "models/net.mlir")
        project.write("kernels/models.toml", MANIFEST.split("[[substitutions]]")[0])
        project.scons("dump", "IREE_TARGETS=llvm-cpu")
        project.copy(project.root / "build/llvm-cpu/net/dump/sources/module_main_dispatch_0.mlir",
                     "kernels/llvm-cpu/square.mlir")
        project.write("kernels/models.toml", MANIFEST)
    return Project.copy_of(made_once(tmp_path_factory, "hotspots-net", dump), tmp_path / "repo")


def test_ranks_every_executable_by_dispatches_times_time(net):
    build = net.scons("hotspots", "IREE_TARGETS=llvm-cpu", FAST)
    assert build.ran("HOTSPOTS") == ["build/llvm-cpu/net/hotspots.txt"]
    assert build.ran("HOTKERNEL") == ["build/llvm-cpu/net/hotspots/kernels.json"]
    assert build.ran("FRONTEND") == []          # the benchmarks come from executables.mlir
    report = json.loads(net.read("build/llvm-cpu/net/hotspots.json"))
    assert (report["model"], report["target"], report["device"]) == ("net", "llvm-cpu", "local-sync")
    rows = {r["executable"]: r for r in report["rows"]}
    assert {name: r["dispatches"] for name, r in rows.items()} == {
        "main_dispatch_0": 2, "main_dispatch_2": 1, "main_dispatch_3": 1, "dynamic_dispatch_0": 1}
    assert report["rows"][0]["executable"] == "main_dispatch_2"         # the matmul
    assert report["rows"][0]["export"] == "main_dispatch_2_matmul_192x192x192_f32"
    twice = rows["main_dispatch_0"]
    assert twice["total_us"] == pytest.approx(2 * twice["us_per_dispatch"])
    assert twice["substituted_by"] == "kernels/llvm-cpu/square.mlir"
    # The substituted kernel timed beside IREE's executable; every time a median of 3, its spread.
    assert twice["kernel_us"] > 0 and twice["speedup"] == \
        pytest.approx(twice["us_per_dispatch"] / twice["kernel_us"])
    assert all(r["kernel_us"] is None for r in report["rows"] if not r["substituted_by"])
    assert twice["repetitions"] == 3 and twice["us_min"] <= twice["us_per_dispatch"] <= \
        twice["us_max"] and twice["spread"] is not None
    assert rows["main_dispatch_2"]["substituted_by"] == ""
    assert rows["main_dispatch_3"]["where"] == ["in a loop"]
    timed = [r for r in report["rows"] if r["total_us"] is not None]
    assert [r["total_us"] for r in timed] == sorted((r["total_us"] for r in timed), reverse=True)
    assert sum(r["share"] for r in timed) == pytest.approx(100)
    assert rows["main_dispatch_2"]["us_per_dispatch"] > 5 * rows["main_dispatch_3"]["us_per_dispatch"]
    dynamic = rows["dynamic_dispatch_0"]
    assert dynamic["total_us"] is None and dynamic["note"] == "no benchmark: dynamic shapes"
    assert report["rows"][-1] == dynamic
    text = net.read("build/llvm-cpu/net/hotspots.txt")
    assert text in build.stdout
    line = next(l for l in text.splitlines() if " main_dispatch_0 " in l)
    assert line.split()[3] == "2" and "kernels/llvm-cpu/square.mlir" in line
    assert f"{twice['kernel_us']:.2f}" in line.split() and line.split()[5].startswith("±")
    assert (net.root / "build/llvm-cpu/net/hotspots.png").read_bytes()[:4] == b"\x89PNG"


def test_times_again_without_compiling_again_and_one_file_builds_one_report(net):
    net.scons("hotspots", "IREE_TARGETS=llvm-cpu", FAST)
    again = net.scons("build/llvm-cpu/net/hotspots.txt", FAST)
    assert again.ran("HOTSPOTS") == ["build/llvm-cpu/net/hotspots.txt"]
    assert again.ran("HOTBENCH") == []
    # Where there is no compiler: time the compiled modules again with the library alone.
    before = net.read("build/llvm-cpu/net/hotspots.json")
    timed = subprocess.run([sys.executable, "-m", "iree_kernels.perf.hotspots",
                            "build/llvm-cpu/net/hotspots.json", "--flags=--batch_size=2"],
                           cwd=net.root, capture_output=True, text=True, timeout=600,
                           env={**os.environ, "PYTHONPATH": str(REPO / "site_scons")})
    assert timed.returncode == 0, timed.stdout + timed.stderr
    after = json.loads(net.read("build/llvm-cpu/net/hotspots.json"))
    assert after["flags"] == "--batch_size=2" and after != json.loads(before)
    assert after["rows"][0]["executable"] == "main_dispatch_2" and "main_dispatch_2" in timed.stdout
    net.scons("-c")
    assert not (net.root / "build/llvm-cpu/net/hotspots").exists()


def test_without_the_device_the_modules_are_compiled_and_the_rows_say_so(net):
    if "cuda" in runtime.available_drivers(RUN_MODULE):
        pytest.skip("this machine has a CUDA device")
    build = net.scons("build/cuda/net/hotspots.txt", FAST)
    report = json.loads(net.read("build/cuda/net/hotspots.json"))
    static = [r for r in report["rows"] if r["function"]]
    assert len(static) == 3 and all(r["note"] == "no cuda device here" for r in static)
    assert all((net.root / r["module"]).is_file() for r in static)
    assert "no cuda device here" in build.stdout
