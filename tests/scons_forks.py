"""scons runs forked from a warm process: SCons and the library are imported once per worker.

Each scons start imports SCons and the library before it reads a SConstruct: about 0.45 s
of a 0.6 s no-op build on 2 cores, and the suite starts scons about a thousand times. The
harness starts this file as a program (one per test process, the *server*), which imports
what a scons run of this repo's ``site_scons`` imports at start and waits. Each run is a
request over a Unix socket: argv, folder, environment, umask and the caller's three standard
streams. The server forks; the child takes its own session (as ``start_new_session``), the
streams, folder, umask and environment, and runs SCons's ``main`` as the ``scons`` script
does, exiting through the interpreter as a scons process would. The server answers the
child's pid, then its exit status as ``Popen.returncode`` reads it (-N: killed by signal N).

What the fork cannot give is left to a real start (``usable``): another scons, another site
folder, ``--debug`` (read while SCons is imported), or an environment that differs in what
Python or SCons read at start (``PYTHON*``, locale, ``SCONSFLAGS``).
"""
from __future__ import annotations

import json
import locale
import os
import re
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STARTUP_NAMES = re.compile(r"PYTHON|LC_|LANG$|LANGUAGE$|SCONSFLAGS$")
MESSAGE = 1 << 20                   # bytes: the largest request (its environment) or answer


def startup_environment(environment: dict[str, str]) -> dict[str, str]:
    """What of an environment a Python process and SCons read once, as they start."""
    return {name: value for name, value in environment.items() if STARTUP_NAMES.match(name)}


class Server:
    """The caller's end: starts the server and runs scons through it."""

    def __init__(self, scons: Path, site_dir: Path, environment: dict[str, str]) -> None:
        self.scons, self.site_dir = scons, site_dir
        self.startup = startup_environment(environment)
        self.folder = tempfile.mkdtemp(prefix="scons-forks-")
        self.address = os.path.join(self.folder, "socket")
        # The server ends when its stdin closes: when this process does.
        self.process = subprocess.Popen(
            [sys.executable, __file__, self.address, str(scons), str(site_dir)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=environment)
        if self.process.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the scons fork server did not start (exit {self.process.wait()})")

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)

    def usable(self, argv: list[str], environment: dict[str, str]) -> bool:
        return (self.process.poll() is None and argv[:2] == [str(self.scons),
                f"--site-dir={self.site_dir}"]
                and not any(arg.startswith("--debug") for arg in argv)
                and startup_environment(environment) == self.startup)

    def start(self, argv: list[str], cwd: Path, environment: dict[str, str]) -> "Started":
        """Fork a scons run; stdout and stderr come back through pipes this process reads."""
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        connection.connect(self.address)
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        umask = os.umask(0)
        os.umask(umask)
        request = json.dumps({"argv": argv, "cwd": str(cwd), "env": environment, "umask": umask})
        try:
            socket.send_fds(connection, [request.encode()], [0, out_write, err_write])
        finally:
            os.close(out_write)
            os.close(err_write)
        return Started(connection, out_read, err_read)


class Started:
    """One forked scons run: its pid, its output pipes, and (``wait``) its exit status."""

    def __init__(self, connection: socket.socket, out: int, err: int) -> None:
        self.connection, self.out, self.err = connection, out, err
        self.chunks: dict[int, list[bytes]] = {out: [], err: []}
        self.ended: set[int] = set()
        answer = connection.recv(MESSAGE)
        if not answer:
            self.close()
            raise RuntimeError("the scons fork server closed the connection")
        self.pid = json.loads(answer)["pid"]

    def communicate(self, deadline: float | None) -> bool:
        """Read both pipes to their end (True), or until ``deadline`` (time.monotonic: False)."""
        with selectors.DefaultSelector() as selector:
            for fd in self.chunks:
                if fd not in self.ended:
                    selector.register(fd, selectors.EVENT_READ)
            while selector.get_map():
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        self.chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
                        self.ended.add(key.fd)
        return True

    def output(self) -> tuple[str, str]:
        """(stdout, stderr) as ``Popen(text=True)`` reads them: the locale's encoding,
        universal newlines."""
        encoding = locale.getpreferredencoding(False)
        out, err = (b"".join(parts).decode(encoding).replace("\r\n", "\n").replace("\r", "\n")
                    for parts in self.chunks.values())
        return out, err

    def kill(self) -> None:
        for kill in (os.killpg, os.kill):
            try:
                kill(self.pid, signal.SIGKILL)
                return
            except ProcessLookupError:
                continue

    def wait(self) -> int:
        answer = self.connection.recv(MESSAGE)
        if not answer:
            raise RuntimeError(f"the scons fork server lost scons (pid {self.pid})")
        return json.loads(answer)["returncode"]

    def close(self) -> None:
        for fd in (self.out, self.err):
            try:
                os.close(fd)
            except OSError:
                pass
        self.connection.close()


# The server's end.

def preload(site_dir: Path) -> None:
    """Import SCons's main, the library and the site tools as a scons run loads them (a tool
    under its own name from its file, which SCons then takes from sys.modules)."""
    import importlib.util
    import SCons.Script.Main  # noqa: F401
    tools = os.path.join(os.path.abspath(site_dir), "site_tools")
    sys.path.insert(0, str(site_dir))
    try:
        for name in sorted(os.listdir(tools)):
            if name.endswith(".py") and name != "__init__.py":
                spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(tools, name))
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(site_dir))
    threads = os.listdir("/proc/self/task")
    if len(threads) != 1:           # a fork copies only the thread that forks
        raise RuntimeError(f"importing the library started {len(threads) - 1} threads")


def serve(listener: socket.socket) -> tuple[dict, list[int]]:
    """Answer requests until stdin closes; in a forked child, return its request and fds."""
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_read, False)
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    waiting: dict[int, socket.socket] = {}
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(wake_read, selectors.EVENT_READ)
    selector.register(sys.stdin.fileno(), selectors.EVENT_READ)
    while True:
        for key, _ in selector.select():
            if key.fileobj is listener:
                connection, _ = listener.accept()
                message, fds, _, _ = socket.recv_fds(connection, MESSAGE, 3)
                pid = os.fork()
                if pid == 0:
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    for held in (selector, listener, connection, *waiting.values()):
                        held.close()
                    os.close(wake_read)
                    os.close(wake_write)
                    return json.loads(message), fds
                for fd in fds:
                    os.close(fd)
                answer(connection, {"pid": pid})
                waiting[pid] = connection
            elif key.fileobj == wake_read:
                os.read(wake_read, 4096)        # a byte per signal; reap takes every child
                reap(waiting)
            else:
                os._exit(0)


def reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            return
        connection = waiting.pop(pid, None)
        if connection:
            answer(connection, {"returncode": os.waitstatus_to_exitcode(status)})
            connection.close()


def answer(connection: socket.socket, message: dict) -> None:
    try:
        connection.send(json.dumps(message).encode())
    except OSError:                     # the caller is gone (interrupted): nothing to tell
        pass


def become(request: dict, fds: list[int]) -> None:
    """This forked child takes the caller's streams, session, folder, umask and environment."""
    os.setsid()
    for number, fd in enumerate(fds):
        os.dup2(fd, number)
    for name in os.listdir("/proc/self/fd"):     # as a new process has: 0, 1 and 2 only
        if int(name) > 2:
            try:
                os.close(int(name))
            except OSError:
                pass
    os.chdir(request["cwd"])
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = request["argv"]


def main(address: str, scons: str, site_dir: str) -> None:
    sys.path[0] = os.path.dirname(scons)    # where the scons script's own sys.path starts
    preload(Path(site_dir))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    become(*serve(listener))


if __name__ == "__main__":
    main(*sys.argv[1:4])
    # What SCons kept as it was imported (in the server): when and where it started.
    import SCons.Script
    SCons.Script.start_time = time.time()
    sys.modules["SCons.Script.SConscript"].launch_dir = os.path.abspath(os.curdir)
    # What the scons script does, in the forked child.
    from SCons.Script.Main import main as scons_main
    sys.argv[0] = re.sub(r'(-script\.pyw|\.exe)?$', '', sys.argv[0])
    sys.exit(scons_main())
