"""Steps on a worker: paths, the worker's refusals and layout, and what the build takes back."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.remote.cluster import Cluster
from iree_kernels.remote.steps import LIBRARY, NotRemote, Outcome, Step, checked_path, digest, \
    relative_arguments, with_package
from iree_kernels.remote.toolchain import identity
from iree_kernels.remote.worker import StepRefused, Tool, WorkerState, run_here

ROOT = "/work/repo"
COPY = "/bin/cp"


def step(**given) -> Step:
    fields = dict(tool="iree-compile", identity=identity(COPY), arguments=("a/in.txt", "out/x.txt"),
                  inputs=(("a/in.txt", digest(b"hello")),), outputs=("out/x.txt",),
                  output_folders=(), limit=30.0, label="out/x.txt")
    fields.update(given)
    return Step(**fields)


@pytest.fixture
def worker(tmp_path) -> WorkerState:
    # A stand-in tool under iree-compile's name: cp copies its input to its output.
    return WorkerState(tmp_path / "scratch", {"iree-compile": Tool(COPY, identity(COPY))})


def test_the_project_s_absolute_paths_become_relative_and_any_other_keeps_the_step_here():
    assert relative_arguments([f"{ROOT}/models/m.mlir", f"@{ROOT}/build/o.flags",
                               f"--dump-to={ROOT}/build/d", "-o", "build/m.vmfb"], ROOT) == \
        ("models/m.mlir", "@build/o.flags", "--dump-to=build/d", "-o", "build/m.vmfb")
    for elsewhere in ("/etc/passwd", "-o/tmp/x", "--x=/tmp/y", "@/tmp/flags"):
        with pytest.raises(NotRemote, match="outside the project"):
            relative_arguments([elsewhere], ROOT)


@pytest.mark.parametrize("path", ["/abs", "../up", "a/../../b", "a/./b", "", ".", "a\\b"])
def test_a_step_naming_a_path_outside_its_folder_cannot_be_made(path):
    with pytest.raises(ValueError):
        checked_path(path)
    with pytest.raises(ValueError):
        step(outputs=(path,))


@pytest.mark.parametrize("argument", ["/etc/passwd", "-o/etc/x", "--dump-to=../x", "@../f",
                                      "a/../../b"])
def test_a_step_whose_command_line_names_a_path_outside_its_folder_cannot_be_made(argument):
    with pytest.raises(ValueError, match="outside the step's folder"):
        step(arguments=(argument,))


def test_a_worker_lays_out_the_inputs_and_sends_back_what_the_step_wrote(worker):
    outcome = run_here(worker, step(), {digest(b"hello"): b"hello"}, "w1")
    assert outcome.returncode == 0 and outcome.worker == "w1"
    assert outcome.files == {"out/x.txt": b"hello"}
    assert outcome.digests == {"out/x.txt": digest(b"hello")}
    kept = worker.blobs / digest(b"hello")
    assert not stat.S_IMODE(kept.stat().st_mode) & 0o222      # kept read-only
    assert list(worker.steps.iterdir()) == []                  # the step's folder is removed


def test_a_worker_refuses_another_tool_s_identity_and_bytes_that_are_not_their_digest(worker):
    with pytest.raises(StepRefused, match="this worker has sha256"):
        run_here(worker, step(identity="0" * 64), {digest(b"hello"): b"hello"}, "w1")
    with pytest.raises(StepRefused, match="not those of its digest"):
        run_here(worker, step(), {digest(b"hello"): b"HELLO"}, "w1")
    assert not any(worker.blobs.iterdir())


def test_a_step_past_its_limit_is_killed_and_says_so(tmp_path):
    sleep = "/bin/sleep"
    state = WorkerState(tmp_path / "scratch", {"iree-compile": Tool(sleep, identity(sleep))})
    outcome = run_here(state, step(identity=identity(sleep), arguments=("5",), inputs=(),
                                   limit=0.3), {}, "w1")
    assert outcome.timed_out and outcome.returncode == 124


def test_the_build_takes_back_only_files_in_the_step_s_folders_with_their_digests(tmp_path):
    cluster = Cluster("tcp://127.0.0.1:9", required=False, say=print)
    good = Outcome(0, "", {"out/x.txt": b"x"}, {"out/x.txt": digest(b"x")}, "w1")
    cluster._take(step(), good, str(tmp_path))
    assert (tmp_path / "out/x.txt").read_bytes() == b"x"
    outside = Outcome(0, "", {"models/m.mlir": b"x"}, {"models/m.mlir": digest(b"x")}, "w1")
    with pytest.raises(UserError, match="outside the step's output folders"):
        cluster._take(step(), outside, str(tmp_path))
    forged = Outcome(0, "", {"out/y.txt": b"y"}, {"out/y.txt": digest(b"z")}, "w1")
    with pytest.raises(UserError, match="not those of its digest"):
        cluster._take(step(), forged, str(tmp_path))
    assert not (tmp_path / "models").exists() and not (tmp_path / "out/y.txt").exists()


def test_a_tool_is_known_by_its_bytes_and_those_of_the_libraries_beside_it(tmp_path):
    for name, content in (("tool", b"\x7fELF one"), ("libIREECompiler.so", b"lib one")):
        (tmp_path / name).write_bytes(content)
    first = identity(str(tmp_path / "tool"))
    (tmp_path / "libIREECompiler.so").write_bytes(b"lib two")
    assert identity(str(tmp_path / "tool")) != first


def test_the_library_s_include_folder_travels_as_a_name_each_machine_fills_with_its_own():
    arguments = relative_arguments([f"-I/opt/lib/iree_kernels/data/include", "-o", "x.spv"],
                                   ROOT, "/opt/lib/iree_kernels")
    assert arguments == ("-I{iree_kernels}/data/include", "-o", "x.spv")
    made = step(arguments=arguments)
    assert with_package(made.arguments, "/w/iree_kernels") == \
        ["-I/w/iree_kernels/data/include", "-o", "x.spv"]
    for elsewhere in ("-o{iree_kernels}/x", "--dump-to={iree_kernels}/x", "{iree_kernels}/x"):
        with pytest.raises(ValueError, match="outside the step's folder"):
            step(arguments=(elsewhere,))


def test_a_depfile_naming_the_worker_s_copy_of_the_library_names_this_machine_s(tmp_path):
    cluster = Cluster("tcp://127.0.0.1:9", required=False, say=print)
    text = b"out/x.spv: a.glsl /w/iree_kernels/data/include/grid.glsl\n"
    outcome = Outcome(0, "", {"out/x.spv.d": text}, {"out/x.spv.d": digest(text)}, "w1",
                      package="/w/iree_kernels")
    cluster._take(step(), outcome, str(tmp_path))
    assert (tmp_path / "out/x.spv.d").read_bytes() == \
        f"out/x.spv: a.glsl {LIBRARY}/data/include/grid.glsl\n".encode()
