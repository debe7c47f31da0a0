"""The build's side of a Dask cluster: sending a step, taking its files back, or saying why not.

A ``Cluster`` connects at the first step that asks (a build that runs no step never imports
Dask), sends each input once per build by content (``scatter``; the worker keeps it by
digest), and asks for a worker holding the step's tool by identity (a Dask resource). A step
runs here, with one line saying why (once per reason), where no worker has that tool or the
scheduler cannot be reached; DASK_REQUIRED=yes makes either a failure. A worker lost
mid-step (its inputs with it) costs a new attempt; the files that come back are taken only
where each has the digest the worker sent and lies in the step's output folders.
Not for: which steps go (the SCons glue decides), running them (``worker``).
"""
from __future__ import annotations

import atexit
import dataclasses
import os
import threading
import time
from pathlib import Path
from typing import Callable

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import read_regular, write_atomically
from iree_kernels.core.stat_memo import file_stamp
from iree_kernels.remote.steps import LIBRARY, NotRemote, Outcome, Step, checked_path, digest
from iree_kernels.remote.toolchain import device_resource, resource, short

CONNECT_TIMEOUT = 10        # seconds to reach the scheduler
ATTEMPTS = 3                # sends of one step before it runs here (workers lost mid-step)
RESULT_MARGIN = 60          # seconds past a step's own limit to wait for its result


class Cluster:
    """The scheduler at ``address``; ``required``: a step that cannot go fails the build;
    ``say``: prints one line (a warning); ``connect_timeout``: seconds to reach it."""

    def __init__(self, address: str, *, required: bool, say: Callable[[str], None],
                 connect_timeout: float | None = CONNECT_TIMEOUT) -> None:
        self.address, self.required, self.say = address, required, say
        self.connect_timeout = connect_timeout or CONNECT_TIMEOUT
        self._client = None
        self._unreachable = False
        self._lock = threading.Lock()
        self._digests: dict[tuple[str, tuple], str] = {}
        self._blobs: dict[str, object] = {}
        self._said: set[str] = set()

    def run(self, step: Step, root: str) -> Outcome | None:
        """``step`` run on a worker, its files written under ``root``; None where it is to run
        here (a line said why)."""
        client = self._connected()
        if client is None:
            return None
        wanted = {resource(step.tool, step.identity): 1,
                  **{device_resource(d): 1 for d in step.devices}}
        if not self._a_worker_has(client, wanted):
            if not self._a_worker_has(client, {resource(step.tool, step.identity): 1}):
                return self._here(f"no worker has this {step.tool} ({short(step.identity)}); "
                                  "its steps run here")
            return self._here(f"no worker with this {step.tool} has a "
                              f"{' and a '.join(step.devices)} device; such steps run here")
        from iree_kernels.remote.worker import StepRefused, run_step
        failure, started, sent = None, time.monotonic(), [0]
        for _ in range(ATTEMPTS):
            try:
                blobs = {d: self._blob(client, path, d, root, sent) for path, d in step.inputs}
                future = client.submit(run_step, step, blobs, resources=wanted, pure=False)
                outcome = future.result(timeout=(step.limit or 3600) + RESULT_MARGIN)
            except StepRefused as e:
                return self._here(f"a worker refused a step: {e}; such steps run here")
            except Exception as e:          # a worker lost, its inputs with it: send again
                failure = e
                self._forget_lost()
                continue
            self._take(step, outcome, root)
            return dataclasses.replace(outcome, waited=time.monotonic() - started, sent=sent[0],
                                       received=sum(map(len, outcome.files.values())))
        return self._here(f"a step failed on the cluster {ATTEMPTS} times "
                          f"({type(failure).__name__}: {failure}); it runs here")

    def stays_here(self, why: NotRemote) -> None:
        """A step that cannot go (``why``): said once per reason where ``why.said``."""
        if why.said:
            self._here(f"a step runs here: {why}")

    def has_device(self, driver: str) -> bool:
        """Whether a worker has a device of the runtime's ``driver`` (connecting if need be)."""
        client = self._connected()
        return client is not None and self._a_worker_has(client, {device_resource(driver): 1})

    @staticmethod
    def _a_worker_has(client, wanted: dict[str, float]) -> bool:
        return any(all(name in (w.get("resources") or {}) for name in wanted)
                   for w in client.scheduler_info(n_workers=-1)["workers"].values())

    def input_digest(self, path: str, root: str) -> str:
        """The SHA-256 of the project's file ``path``, read once while it stays as it is."""
        absolute = os.path.join(root, path)
        key = (path, tuple(file_stamp(absolute)))
        found = self._digests.get(key)
        if found is None:
            found = self._digests[key] = digest(read_regular(absolute))
        return found

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def _connected(self):
        with self._lock:
            if self._client is not None or self._unreachable:
                return self._client
            started = time.monotonic()
            try:
                from distributed import Client      # deferred: 0.5 s, only where a step goes
                self._client = Client(self.address, timeout=self.connect_timeout,
                                      set_as_default=False, direct_to_workers=True)
                workers = len(self._client.scheduler_info(n_workers=-1)["workers"])
            except (OSError, TimeoutError, ValueError) as e:
                message = (f"DASK_SCHEDULER={self.address}: cannot reach the scheduler "
                           f"({type(e).__name__}: {e})")
                if self.required:
                    raise UserError(f"{message}; DASK_REQUIRED=yes") from None
                self._unreachable = True
                self.say(f"scons: warning: {message}; every step runs here")
                return None
            atexit.register(self.close)
            self.say(f"scons: DASK_SCHEDULER={self.address}: {workers} worker(s); connected in "
                     f"{time.monotonic() - started:.2f} s")
            return self._client

    def _blob(self, client, path: str, expected: str, root: str, sent: list[int]):
        with self._lock:
            future = self._blobs.get(expected)
            if future is None:
                content = read_regular(os.path.join(root, path))
                if digest(content) != expected:
                    raise UserError(f"{path} changed while the build read it")
                future = self._blobs[expected] = client.scatter(content, hash=False)
                sent[0] += len(content)
            return future

    def _forget_lost(self) -> None:
        with self._lock:
            self._blobs = {d: f for d, f in self._blobs.items() if f.status == "finished"}

    def _take(self, step: Step, outcome: Outcome, root: str) -> None:
        folders = {*step.output_folders, *(os.path.dirname(p) for p in step.outputs)}
        for path, content in outcome.files.items():
            checked_path(path)
            if not any(path.startswith(f"{folder}/") for folder in folders):
                raise UserError(f"worker {outcome.worker} sent {path}, outside the step's "
                                "output folders")
            if outcome.digests.get(path) != digest(content):
                raise UserError(f"worker {outcome.worker} sent {path} with bytes that are not "
                                "those of its digest")
        for path, content in outcome.files.items():
            if path.endswith(".d") and outcome.package and outcome.package != LIBRARY:
                # A depfile names the headers the compile read: the library's as the worker has
                # them, which are this machine's where the versions are the same.
                content = content.replace(outcome.package.encode() + b"/", LIBRARY.encode() + b"/")
            destination = Path(root, path)
            destination.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(destination, content)

    def _here(self, reason: str) -> None:
        if self.required:
            raise UserError(f"DASK_REQUIRED=yes: {reason}")
        with self._lock:
            new = reason not in self._said
            self._said.add(reason)
        if new:
            self.say(f"scons: warning: DASK_SCHEDULER={self.address}: {reason}")
        return None
