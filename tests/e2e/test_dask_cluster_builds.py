"""End to end: a build's iree-compile steps on a loopback Dask cluster (DASK_SCHEDULER)."""
from __future__ import annotations

import hashlib
import re
import shutil
import threading
import time
from pathlib import Path

import pytest

from conftest import REPO, Project
from harness import LoopbackCluster
from iree_kernels.core import toolchains

pytestmark = pytest.mark.skipif(toolchains.on_path("glslangValidator") is None,
                                reason="no glslangValidator (./setup.sh installs glslang-tools)")

SHADER = "kernels/vulkan/mlp_bias_relu_rowsum.glsl"
MANIFEST = f"""
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan"]

[models.elementwise]
source = "models/elementwise.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/llvm-cpu/mlp_square_relu.mlir"
verify = false                           # it computes something else

[[substitutions]]
model = "mlp"
target = "vulkan"
executable = "main_dispatch_1"
file = "{SHADER}"
"""
FILES = ["models/mlp.mlir", "models/elementwise.mlir", "kernels/llvm-cpu/mlp_square_relu.mlir",
         SHADER]
LAYERS = """
[models.layers]
source = "models/layers.mlir"
targets = ["llvm-cpu"]
"""
RAN_ON = re.compile(r"^\s+(\S+) ran on (\S+) in ", re.MULTILINE)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with LoopbackCluster(tmp_path_factory.mktemp("cluster"), {"w1": [], "w2": []}) as running:
        yield running


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    monkeypatch.delenv("IREE_KERNELS_CACHE_DIR", raising=False)
    monkeypatch.delenv("IREE_KERNELS_DASK_SCHEDULER", raising=False)


def checkout(root: Path, manifest: str = MANIFEST, files=FILES) -> Project:
    project = Project(root)
    for path in files:
        project.copy(REPO / path, path)
    project.write("kernels/demo.toml", manifest)
    return project


def built(root: Path) -> dict[str, str]:
    """Every module and archive under ``root``/build -> its SHA-256; not verify's harness
    modules, which are not reproducible in any build (a Vulkan one records its scratch path)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "build").rglob("*"))
            if p.suffix in (".vmfb", ".gz") and "verify" not in p.parts}


EXPECTED = """
[[case]]
function = "main"
inputs = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]
outputs = ["4xf32=344 344 344 344"]
targets = ["llvm-cpu"]
"""


def test_a_build_check_and_release_through_the_cluster_make_what_a_local_build_makes(
        tmp_path, cluster):
    local = checkout(tmp_path / "local" / "repo")
    remote = checkout(tmp_path / "remote" / "repo")
    address = f"DASK_SCHEDULER={cluster.address}"
    local.scons("-j2")
    run = remote.scons("-j2", address)
    went = dict(RAN_ON.findall(run.output))
    # mlp's relinked module: its unlinked compile from the model (dumping the sources) went,
    # and so did the shader's compile, its depfile with it.
    assert "build/llvm-cpu/mlp/unlinked/mlp.vmfb" in went, run.output
    assert "build/kernels/vulkan/mlp_bias_relu_rowsum.spv" in went, run.output
    depfile = "build/kernels/vulkan/mlp_bias_relu_rowsum.spv.d"
    assert remote.read(depfile) == local.read(depfile)
    assert set(run.ran("IREE")) <= set(went), run.output
    assert built(remote.root) == built(local.root)

    for project in (local, remote):
        project.write("models/mlp.expected.toml", EXPECTED)
    local.scons("check", "release", "-j2")
    run = remote.scons("check", "release", "-j2", address)
    went.update(RAN_ON.findall(run.output))
    # The front ends verify reads, its runs on the Vulkan device, the expected-output case's
    # run (check) and the release's linked modules went too.
    assert "build/vulkan/mlp/executables.mlir" in went, run.output
    assert "build/vulkan/mlp/verify/main_dispatch_1.verify.json" in went, run.output  # harnesses
    assert "build/vulkan/mlp/verify/main_dispatch_1.verified" in went, run.output
    assert "matched IREE's executable on vulkan" in run.output
    assert "build/llvm-cpu/mlp.check" in went, run.output
    assert "check: build/llvm-cpu/mlp.vmfb: 1 case(s) of models/mlp.expected.toml matched" \
        in run.output, run.output
    assert set(run.ran("IREE")) <= set(went), run.output
    assert set(went.values()) <= {"w1", "w2"}
    assert set(went) == set(cluster.steps_run("w1") + cluster.steps_run("w2"))
    assert "warning" not in run.output
    assert built(remote.root) == built(local.root)
    assert len(built(local.root)) >= 4
    assert remote.scons("--question", "release", expect_ok=False).returncode == 0

    # The microbenchmarks' timing runs go to a worker with the device too.
    run = remote.scons("bench", address)
    timed = [path for path in RAN_ON.findall(run.output) if path[0].endswith(".json")]
    assert timed and {worker for _, worker in timed} <= {"w1", "w2"}, run.output


def test_a_worker_killed_mid_compile_leaves_its_step_to_another_and_the_build_finishes(tmp_path):
    remote = checkout(tmp_path / "remote" / "repo", LAYERS, ["models/layers.mlir"])
    with LoopbackCluster(tmp_path / "cluster", {"w1": [], "w2": []}) as cluster:
        killed = []

        def kill_the_first_running():
            deadline = time.monotonic() + 120
            while not killed and time.monotonic() < deadline:
                for name in cluster.names:
                    if cluster.running(name):
                        cluster.kill(name)
                        killed.append(name)
                        break
                time.sleep(0.01)

        killer = threading.Thread(target=kill_the_first_running)
        killer.start()
        run = remote.scons("IREE_TARGETS=llvm-cpu", f"DASK_SCHEDULER={cluster.address}")
        killer.join()
        survivor, = set(cluster.names) - set(killed)
        assert killed, "no step was seen running"
        assert dict(RAN_ON.findall(run.output)) == {"build/llvm-cpu/layers.vmfb": survivor}
        assert cluster.steps_run(killed[0]) == []
    # The module is the one the other worker made (the first test compares bytes with a
    # local build), and the build is done.
    assert list(built(remote.root)) == ["build/llvm-cpu/layers.vmfb"]
    assert remote.scons("--question", "IREE_TARGETS=llvm-cpu", expect_ok=False).returncode == 0


def test_a_step_runs_here_when_no_worker_has_the_same_iree_compile(tmp_path):
    other = tmp_path / "other-iree" / "iree-compile"
    other.parent.mkdir()
    shutil.copyfile(toolchains.iree_compile(), other)
    with open(other, "ab") as f:
        f.write(b"another build of iree-compile")
    project = checkout(tmp_path / "repo")
    with LoopbackCluster(tmp_path / "cluster", {"w1": ["--tool", f"iree-compile={other}"]}) \
            as cluster:
        address = f"DASK_SCHEDULER={cluster.address}"
        required = project.scons("IREE_TARGETS=llvm-cpu", address, "DASK_REQUIRED=yes",
                                 expect_ok=False)
        assert required.returncode == 2, required.output
        assert "DASK_REQUIRED=yes: no worker has this iree-compile (sha256 " in required.output
        assert "Traceback" not in required.output
        assert not list((project.root / "build").rglob("*.vmfb"))
        run = project.scons("IREE_TARGETS=llvm-cpu", address)
        assert run.output.count("no worker has this iree-compile") == 1, run.output
        assert not RAN_ON.search(run.output)
        assert cluster.steps_run("w1") == []
    assert run.ran("IREE")


def test_an_unreachable_scheduler_costs_one_warning_and_the_build_runs_here(tmp_path):
    project = checkout(tmp_path / "repo")
    nowhere = ("DASK_SCHEDULER=tcp://127.0.0.1:9", "DASK_CONNECT_TIMEOUT=1")
    failed = project.scons("IREE_TARGETS=llvm-cpu", *nowhere, "DASK_REQUIRED=yes",
                           expect_ok=False)
    assert failed.returncode == 2
    assert "DASK_SCHEDULER=tcp://127.0.0.1:9: cannot reach the scheduler" in failed.output
    assert "Traceback" not in failed.output
    run = project.scons("IREE_TARGETS=llvm-cpu", *nowhere)
    assert run.output.count("cannot reach the scheduler") == 1, run.output
    assert run.made_modules()


def test_the_codegen_cache_s_batches_compile_on_the_workers(tmp_path, cluster):
    manifest = '[models.elementwise]\nsource = "models/elementwise.mlir"\ntargets = ["llvm-cpu"]\n'
    files = ["models/elementwise.mlir"]
    local = checkout(tmp_path / "local" / "repo", manifest, files)
    remote = checkout(tmp_path / "remote" / "repo", manifest, files)
    cached = ("IREE_TARGETS=llvm-cpu", "EXECUTABLE_CACHE=llvm-cpu")
    local.scons(*cached)
    run = remote.scons(*cached, f"DASK_SCHEDULER={cluster.address}")
    went = dict(RAN_ON.findall(run.output))
    # ASSEMBLE compiles the cache's misses (CODEGEN): those batches went.
    assert "build/llvm-cpu/elementwise/module/elementwise.mlir" in went, run.output
    assert built(remote.root) == built(local.root)
    assert "warning" not in run.output
