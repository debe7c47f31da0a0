"""A CUDA verify run by a scons that sees no GPU, through a Dask worker that has one.

Marked ``gpu``: the worker (``python -m iree_kernels worker``) sees the machine's GPUs and
advertises ``device:cuda``; the build runs with CUDA_VISIBLE_DEVICES empty, so that its own
iree-run-module lists no CUDA device, as on a laptop or a CI runner.
"""
from __future__ import annotations

import re

from conftest import REPO, Project
from cuda_models import NEEDS_CUDA
from harness import LoopbackCluster

import pytest

pytestmark = NEEDS_CUDA

MANIFEST = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["cuda"]

[[substitutions]]
model = "mlp"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/cuda/mlp_matmul.cu"
"""
RAN_ON = re.compile(r"^\s+(\S+) ran on (\S+) in ", re.MULTILINE)


def test_a_cuda_verify_on_a_machine_without_a_gpu_runs_on_a_gpu_worker(tmp_path):
    project = Project(tmp_path / "repo")
    for path in ("models/mlp.mlir", "kernels/cuda/mlp_matmul.cu"):
        project.copy(REPO / path, path)
    project.write("kernels/demo.toml", MANIFEST)
    no_gpu = {"CUDA_VISIBLE_DEVICES": ""}
    alone = project.scons("verify", "IREE_TARGETS=cuda", env=no_gpu)
    assert "no 'cuda' device on this machine" in alone.output, alone.output
    with LoopbackCluster(tmp_path / "cluster", {"gpu-worker": []}) as cluster:
        assert "device:cuda=" in cluster.log("gpu-worker")
        run = project.scons("verify", "IREE_TARGETS=cuda", f"DASK_SCHEDULER={cluster.address}",
                            env=no_gpu)
    went = dict(RAN_ON.findall(run.output))
    assert went.get("build/cuda/mlp/verify/main_dispatch_0.verified") == "gpu-worker", \
        run.output
    assert "matched IREE's executable on cuda" in run.output
