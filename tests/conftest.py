"""Shared fixtures: small SCons projects in temporary folders, built with this repo's tools."""
from __future__ import annotations

import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import pytest
from filelock import FileLock

import compile_memo
import harness
import scons_forks
from harness import REPO, SCONS, Run, scons

DATA = Path(__file__).parent / "data"
# models/saxpy.mlir on llvm-cpu with the C kernel kernels/saxpy.c, wrapped: the manifest of
# several tests.
SAXPY_C = (DATA / "manifests/saxpy_c.toml").read_text()
# models/mlp.mlir on llvm-cpu with the demo's MLIR kernel kernels/llvm-cpu/mlp_square_relu.mlir.
MLP_SQUARE_RELU = (DATA / "manifests/mlp_square_relu.toml").read_text()
# A developer's shared or remote cache would serve the steps the tests expect to see run.
os.environ.pop("IREE_KERNELS_CACHE_DIR", None)
os.environ.pop("IREE_KERNELS_REMOTE_CACHE_URL", None)


GPU_TESTS = Path(__file__).parent / "gpu"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items) -> None:
    """tests/gpu build in this checkout's build/ (one scons at a time there, and each reads what
    the last built): one worker runs them all. A test marked ``xdist_group`` goes to that
    group's worker (--dist loadgroup).

    pytest-xdist 3.8 names a test's group by appending ``@GROUP`` to its node id, through an
    attribute pytest 9 no longer reads (``item._nodeid``); the id is set here instead, as
    xdist's worker would (xdist's controller sends each group to one worker).
    """
    for item in items:
        if item.path.is_relative_to(GPU_TESTS):
            item.add_marker(pytest.mark.xdist_group("gpu-checkout"))
    if not getattr(config.option, "loadgroup", False):     # set on xdist's workers
        return
    from _pytest.nodeid import NodeId
    for item in items:
        groups = sorted({str(m.args[0] if m.args else m.kwargs.get("name", "default"))
                         for m in item.iter_markers("xdist_group")})
        if groups and "@" not in item.nodeid:
            item._id = NodeId.parse(f"{item.nodeid}@{'_'.join(groups)}")


class Project:
    """A throwaway repo: SConstruct, manifests, models, kernels; built with this repo's site_scons."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.write("SConstruct", (REPO / "SConstruct").read_text())

    @classmethod
    def copy_of(cls, built: Path, root: Path) -> "Project":
        """A copy at ``root`` of the project folder ``built``, its build up to date there too
        (times kept; every path a build records is relative to the repository)."""
        shutil.copytree(built, root, symlinks=True)
        return cls(root)

    def write(self, relative: str, text: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return path

    def copy(self, source: Path, relative: str) -> Path:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, path)
        return path

    def read(self, relative: str) -> str:
        return (self.root / relative).read_text()

    def scons(self, *args: str, expect_ok: bool = True, env: dict | None = None,
              fresh: bool = False) -> Run:
        """scons -Q ``args`` here (harness.scons); a failure raises unless not ``expect_ok``."""
        build = scons(self.root, *args, env=env, fresh=fresh)
        if expect_ok and not build.ok:
            raise AssertionError(build.failure())
        return build


@contextmanager
def umask(mask: int):
    """The process's umask set to ``mask`` for a while (files a build writes take it)."""
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path / "repo")


@pytest.fixture(autouse=True, scope="session")
def iree_compile_memo(tmp_path_factory):
    """$IREE_COMPILE for the run: iree-compile behind tests/compile_memo.py, so a compile that
    an earlier test already did (same flags, same bytes read) is answered from its record.
    IREE_KERNELS_TEST_COMPILE_MEMO=0 runs every compile."""
    from iree_kernels.core import toolchains
    real = toolchains.iree_compile()
    if os.environ.get("IREE_KERNELS_TEST_COMPILE_MEMO") == "0" or real is None:
        yield
        return
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    program = base / "iree-compile-memo" / "iree-compile"
    program.parent.mkdir()
    program.write_text(compile_memo.program(real, str(shared / "iree-compile-records")))
    program.chmod(0o755)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("IREE_COMPILE", str(program))
        yield


@pytest.fixture(autouse=True, scope="session")
def scons_fork_server():
    """The scons runs of this process forked from one that has imported SCons and the library
    (tests/scons_forks.py). IREE_KERNELS_TEST_SCONS_FORKS=0 starts each run afresh."""
    if os.environ.get("IREE_KERNELS_TEST_SCONS_FORKS") == "0" or not SCONS.exists():
        yield                       # (no scons here: a GPU machine with IREE's runtime only)
        return
    harness.FORKS = scons_forks.Server(
        SCONS, harness.SITE_DIR, harness.environment_with(harness.SCONS_ENVIRONMENT))
    try:
        yield
    finally:
        harness.FORKS.close()
        harness.FORKS = None


def pytest_terminal_summary(terminalreporter, config) -> None:
    factory = getattr(config, "_tmp_path_factory", None)
    line = factory and compile_memo.summary(str(factory.getbasetemp() / "iree-compile-records"))
    if line:
        terminalreporter.write_line(line)


def made_once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name`` that ``make(folder)`` fills once per test run, for every worker.

    With pytest-xdist each worker has its own base temporary folder; their parent
    is the run's, shared. The first worker to get here makes the folder, under a
    file lock the others wait on; a folder ``make`` failed to finish is made again.
    Tests read it, or copy it (``Project.copy_of``); none writes into it.
    """
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent
    folder, done = base / f"made-once-{name}", base / f"made-once-{name}.done"
    with FileLock(base / f"made-once-{name}.lock"):
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder




def linked_demo(tmp_path_factory, target: str) -> Path:
    """This repo's demo (its kernels/ and models/) built for ``target`` linked, as iree-compile
    links (RELINK=no), without the codegen cache: made once per run for the tests that compare
    what they build with it (``made_once``: read it, never write into it)."""
    def build(folder: Path) -> None:
        project = Project(folder)
        for name in ("kernels", "models"):
            shutil.copytree(REPO / name, folder / name)
        project.scons(f"IREE_TARGETS={target}", "EXECUTABLE_CACHE=0", "RELINK=no", "-j2")
    return made_once(tmp_path_factory, f"demo-linked-{target}", build)


def run_module(module: Path, device: str, function: str, inputs: list[str]) -> str:
    """The outputs iree-run-module prints for one call, as text."""
    from iree_kernels.core import toolchains
    argv = [toolchains.iree_tool("iree-run-module"), f"--module={module}",
            f"--device={device}", f"--function={function}", "--output_max_element_count=100000",
            *[f"--input={i}" for i in inputs]]
    result = subprocess.run(argv, capture_output=True, text=True, check=True)
    return result.stdout.split("hal.buffer_view", 1)[-1].strip()


def reference_module(root: Path, target: str, model: str, source: str, out: Path) -> Path:
    """The module iree-compile makes of the model itself, its own substitution flags doing the work.

    What every module the build makes (front end once, substitutions applied to
    its executable-sources program) must compute bit for bit. Uses the flag
    files the build wrote for ``model`` and ``target`` under ``root``/build.
    """
    from iree_kernels.core import toolchains
    here = f"build/{target}/{model}"
    if source.endswith(".onnx"):
        source = f"build/models/{model}.mlir"         # what the build imported it to
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([toolchains.iree_compile(), source, f"@{here}/options.flags",
                    f"@{here}/substitutions.flags", "-o", str(out)],
                   cwd=root, check=True, capture_output=True)
    return out


def case_outputs(run_module: str, module: Path, case, device: str, out: Path, root: Path) -> list:
    """Every result of one expected-outputs case (iree_kernels.check.expected_outputs.Case), exactly as computed.

    ``@file`` inputs are relative to ``root``, the repo.
    """
    import numpy as np
    argv = [run_module, f"--module={module}", f"--device={device}", f"--function={case.function}",
            *[f"--input={i}" for i in case.inputs],
            *[f"--output={'@' if n == 0 else '+'}{out}" for n in range(len(case.outputs))]]
    subprocess.run(argv, cwd=root, check=True, capture_output=True, text=True)
    with open(out, "rb") as f:
        return [np.load(f) for _ in case.outputs]
