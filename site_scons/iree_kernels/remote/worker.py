"""A worker's side: running a step in a folder of its own, and ``python -m iree_kernels worker``.

The scheduler and the workers run this library (Dask's scheduler reads the steps it is
sent). A worker is a Dask worker started with this module's plugin, which holds its scratch folder
and its tools. A step runs only where its tool's identity is the worker's own (StepRefused
otherwise, even where the scheduler was told otherwise), in a new folder under the scratch
folder, laid out from its inputs (each kept once by digest, read-only, and linked in); what
it wrote in its output folders goes back. Its paths are relative and normal (``steps``),
so the files it is given land inside that folder.
Not for: choosing a worker (the scheduler does, by resources), sending steps (``cluster``).
"""
from __future__ import annotations

import os
import shutil
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core import processes
from iree_kernels.core.files import remove_quietly, stage_content, put_in_place
from iree_kernels.remote.steps import LIBRARY, Outcome, Step, checked_path, digest, with_package
from iree_kernels.remote.toolchain import REMOTE_TOOLS, device_resource, identity, resource

PLUGIN = "iree-kernels"
KEPT_OUTPUT = 4 << 20           # bytes of what a step printed sent back (first 4 MiB, last 1 MiB)
KEPT_BLOBS = 4 << 30            # bytes of inputs kept by digest before the oldest go


class StepRefused(Exception):
    """A step this worker does not run (another tool's identity, a tool it lacks)."""


@dataclass(frozen=True)
class Tool:
    path: str
    identity: str


class WorkerState:
    """A worker's scratch folder (steps/, blobs/) and tools (name -> Tool)."""

    def __init__(self, scratch: Path, tools: dict[str, Tool]) -> None:
        self.scratch, self.tools = scratch, tools
        self.blobs = scratch / "blobs"
        self.steps = scratch / "steps"
        for folder in (self.blobs, self.steps):
            folder.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def resources(self, slots: int) -> dict[str, float]:
        return {resource(name, tool.identity): slots for name, tool in self.tools.items()}

    def blob(self, expected: str, content: bytes) -> Path:
        """The kept file of the input whose digest is ``expected``; ``content`` checked."""
        path = self.blobs / expected
        with self._lock:
            if path.is_file():
                os.utime(path)
                return path
            if digest(content) != expected:
                raise StepRefused(f"an input's bytes are not those of its digest {expected[:12]}")
            temporary, _ = stage_content(path, content, mode=0o444)
            put_in_place(temporary, path)
            self._evict()
        return path

    def _evict(self) -> None:
        kept = sorted(self.blobs.iterdir(), key=lambda p: p.stat().st_mtime)
        total = sum(p.stat().st_size for p in kept)
        while total > KEPT_BLOBS and len(kept) > 1:
            oldest = kept.pop(0)
            total -= oldest.stat().st_size
            remove_quietly(oldest)


def run_step(step: Step, blobs: dict[str, bytes]) -> Outcome:
    """Run ``step`` on this worker with its inputs' bytes (digest -> bytes)."""
    from distributed import get_worker      # deferred: the build imports this module too
    worker = get_worker()
    print(f"running {step.label}", flush=True)
    outcome = run_here(worker.plugins[PLUGIN].state, step, blobs, worker.name)
    print(f"ran {step.label} in {outcome.seconds:.2f} s, exit {outcome.returncode}", flush=True)
    return outcome


def run_here(state: WorkerState, step: Step, blobs: dict[str, bytes], name: str) -> Outcome:
    tool = state.tools.get(step.tool)
    if tool is None or tool.identity != step.identity:
        have = f"sha256 {tool.identity[:12]}" if tool else "none"
        raise StepRefused(f"{step.tool} sha256 {step.identity[:12]} asked, this worker has {have}")
    folder = state.steps / f"step-{uuid.uuid4().hex}"
    folder.mkdir()
    try:
        given = set()
        for path, expected in step.inputs:
            placed = folder / checked_path(path)
            placed.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(state.blob(expected, blobs[expected]), placed)
            given.add(path)
        for path in (*step.output_folders, *(os.path.dirname(p) for p in step.outputs)):
            (folder / path).mkdir(parents=True, exist_ok=True)
        argv = [tool.path, *with_package(step.arguments, LIBRARY)]
        temporary = folder / ".tmp"            # nvcc's and clang's own files stay in the folder
        temporary.mkdir()
        started = time.monotonic()
        try:
            result = processes.run(argv, limit=step.limit, cwd=folder, stderr=processes.STDOUT,
                                   keep=KEPT_OUTPUT, env={**os.environ, "TMPDIR": str(temporary)})
        except processes.TimeLimit as e:
            return Outcome(124, e.output, worker=name, seconds=time.monotonic() - started,
                           timed_out=True)
        ran = time.monotonic() - started
        files = _written(folder, step, given)
        return Outcome(result.returncode, result.stdout, files,
                       {path: digest(content) for path, content in files.items()}, name, ran,
                       package=LIBRARY)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _written(folder: Path, step: Step, given: set[str]) -> dict[str, bytes]:
    """The regular files in the step's output folders that it was not given."""
    files = {}
    for where in sorted({*step.output_folders, *(os.path.dirname(p) for p in step.outputs)}):
        for parent, _, names in os.walk(folder / where):
            for name in names:
                path = Path(parent, name)
                relative = path.relative_to(folder).as_posix()
                if relative not in given and path.is_file() and not path.is_symlink():
                    files[relative] = path.read_bytes()
    return files


def _link_or_copy(source: Path, destination: Path) -> None:
    try:
        os.link(source, destination)
    except OSError:
        shutil.copyfile(source, destination)


def local_tools(given: dict[str, str] | None = None) -> dict[str, Tool]:
    """The tools this machine has of REMOTE_TOOLS (``given``: name -> path, taken first)."""
    from iree_kernels.core import toolchains
    found = {"iree-compile": toolchains.iree_compile(),
             "iree-run-module": toolchains.iree_tool("iree-run-module"),
             "iree-benchmark-module": toolchains.iree_tool("iree-benchmark-module"),
             "nvcc": toolchains.nvcc(), "clang": toolchains.on_path("clang"),
             "glslangValidator": toolchains.on_path("glslangValidator"),
             "glslc": toolchains.on_path("glslc")}
    found.update(given or {})
    return {name: Tool(os.path.realpath(path), identity(path))
            for name, path in found.items() if name in REMOTE_TOOLS and path}


def devices(tools: dict[str, Tool], slots: int) -> dict[str, float]:
    """The IREE runtime's devices here, as Dask resources: ``device:<driver>``, one per GPU
    (a step runs alone on one), ``slots`` for the CPU's drivers."""
    from iree_kernels.core import toolchains
    run_module = tools.get("iree-run-module")
    found: dict[str, float] = {}
    for uri in toolchains.runtime_devices(run_module.path) if run_module else []:
        driver = uri.split("://", 1)[0]
        found[device_resource(driver)] = slots if driver.startswith("local-") else \
            found.get(device_resource(driver), 0) + 1
    return found


def serve(scheduler: str, *, name: str | None, nthreads: int, scratch: Path,
          tools: dict[str, str], resources: dict[str, float]) -> None:
    """Run a Dask worker of ``scheduler`` with this module's plugin until it is stopped."""
    import asyncio
    from distributed import Worker, WorkerPlugin

    state = WorkerState(scratch, local_tools(tools))

    class Plugin(WorkerPlugin):
        name = PLUGIN

        def __init__(self) -> None:
            self.state = state

    name = name or f"{socket.gethostname()}-{os.getpid()}"
    advertised = {**devices(state.tools, nthreads), **resources, **state.resources(nthreads)}

    async def run() -> None:
        async with Worker(scheduler, name=name, nthreads=nthreads, resources=advertised,
                          plugins={Plugin()}, local_directory=str(scratch / "dask")) as worker:
            print(f"worker {name} at {worker.address}: "
                  + ", ".join(f"{tool} sha256 {t.identity[:12]}" for tool, t in state.tools.items())
                  + "; " + ", ".join(f"{r}={n:g}" for r, n in sorted(advertised.items())
                                     if not r.startswith("tool:")), flush=True)
            await worker.finished()

    asyncio.run(run())


def serve_scheduler(host: str, port: int) -> None:
    """Run a Dask scheduler on ``host``:``port`` until it is stopped (no dashboard)."""
    import asyncio
    from distributed import Scheduler

    async def run() -> None:
        async with Scheduler(host=host, port=port, dashboard=False) as scheduler:
            print(f"scheduler at {scheduler.address}", flush=True)
            await scheduler.finished()

    asyncio.run(run())
