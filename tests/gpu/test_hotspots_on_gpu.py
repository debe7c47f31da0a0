"""The hotspot report timed on a real CUDA device.

Marked ``gpu``: skipped where iree-run-module finds no CUDA device. Where
iree-compile is installed it builds the report of tests/data/hotspots.mlir for
cuda with scons in a temporary repo; elsewhere (a GPU machine carrying only
the runtime) it times the benchmark modules already compiled into
build/hotspots-gpu/ (made here, with the compiler, by

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_hotspots_on_gpu.py

then carry build/ there) with ``python -m iree_kernels.perf.hotspots``, as a user
without a compiler would. Either way: every static executable is timed on the
GPU, the matmul ranks first, the executable dispatched twice counts twice.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DATA, REPO, SCONS, Project
from cuda_models import NEEDS_CUDA
from iree_kernels.perf import hotspot_report
from iree_kernels.core import toolchains

pytestmark = NEEDS_CUDA
CARRIED = REPO / "build/hotspots-gpu"
REPORT = "build/cuda/net/hotspots.json"
MANIFEST = '[models.net]\nsource = "models/net.mlir"\ntargets = ["cuda"]\n'


def build_report(root: Path) -> Project:
    """The report of tests/data/hotspots.mlir for cuda, built with scons in ``root``."""
    shutil.rmtree(root, ignore_errors=True)
    project = Project(root)
    project.copy(DATA / "hotspots.mlir", "models/net.mlir")
    project.write("kernels/models.toml", MANIFEST)
    project.scons("hotspots")
    return project


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> dict:
    if toolchains.iree_compile() and SCONS.exists():
        project = build_report(tmp_path_factory.mktemp("hotspots") / "repo")
        return json.loads(project.read(REPORT))
    if not (CARRIED / REPORT).is_file():
        pytest.fail(f"{CARRIED / REPORT} is not built: see this file's docstring")
    subprocess.run([sys.executable, "-m", "iree_kernels.perf.hotspots", REPORT], cwd=CARRIED,
                   check=True, timeout=600,
                   env={**os.environ, "PYTHONPATH": str(REPO / "site_scons")})
    return json.loads((CARRIED / REPORT).read_text())


def test_every_static_executable_is_timed_on_the_gpu_and_ranked(report):
    print(hotspot_report.table(hotspot_report.from_json(json.dumps(report))))
    rows = {r["executable"]: r for r in report["rows"]}
    assert report["device"] == "cuda"
    static = [r for r in report["rows"] if r["function"]]
    assert len(static) == 3 and all(r["us_per_dispatch"] > 0 and r["note"] == "" for r in static)
    # The 192^3 matmul takes longest per dispatch; on an H200 (22 us against 14 us) not
    # longest in all: the executable dispatched twice is. The ranking is by total.
    assert max(static, key=lambda r: r["us_per_dispatch"])["executable"] == "main_dispatch_2"
    totals = [r["total_us"] for r in static]
    assert totals == sorted(totals, reverse=True)
    assert rows["main_dispatch_0"]["dispatches"] == 2
    assert rows["main_dispatch_0"]["total_us"] == pytest.approx(
        2 * rows["main_dispatch_0"]["us_per_dispatch"])
    assert rows["dynamic_dispatch_0"]["note"] == "no benchmark: dynamic shapes"
    assert sum(r["share"] for r in static) == pytest.approx(100)


if __name__ == "__main__":
    # Compile the report's benchmark modules here, for a GPU machine with only the runtime.
    build_report(CARRIED)
