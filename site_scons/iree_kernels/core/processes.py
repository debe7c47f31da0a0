"""Running a program: the one way the library and its SCons glue start one.

A program runs from its argument list (never through a shell), within a time
limit; a program that runs past it is killed with every process it started
(iree-compile's and iree-opt's children included), and ``TimeLimit`` says so.
Its output is captured as text unless the caller passes files.

Not for: finding programs and their versions (``toolchains``), what a failure
means to the build (the callers say that in their own words).
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import IO, Mapping, Sequence

PIPE, STDOUT = subprocess.PIPE, subprocess.STDOUT


@dataclass(frozen=True)
class Finished:
    """What a program that ended left: its exit status (negative: killed by that signal) and
    what it printed (None where it went to a file)."""
    returncode: int
    stdout: str | bytes | None
    stderr: str | bytes | None

    @property
    def output(self) -> str:
        """Everything it printed, standard output then standard error, as text."""
        return "".join(_text(part) for part in (self.stdout, self.stderr))


class TimeLimit(Exception):
    """A program ran past its limit and was killed with its children; ``output``: what it
    printed until then."""

    def __init__(self, limit: float, output: str) -> None:
        super().__init__(f"ran past its limit of {limit:g} s")
        self.limit, self.output = limit, output


def run(argv: Sequence[str], *, limit: float | None, stdin: str | os.PathLike | None = None,
        input: str | bytes | None = None, stdout: int | IO | None = PIPE,
        stderr: int | IO | None = PIPE, cwd: str | os.PathLike | None = None,
        env: Mapping[str, str] | None = None, text: bool = True,
        keep: int | None = None) -> Finished:
    """Run ``argv`` to its end within ``limit`` seconds (None: no limit).

    ``stdin``: a file to read (default: nothing), or ``input`` to write to it.
    ``stdout``/``stderr``: PIPE (captured), STDOUT (stderr merged), or an open
    file. OSError where the program cannot be started; TimeLimit past the limit.
    ``keep``: where what is printed is only read by people, the bytes of it kept:
    its first ``keep`` and last ``keep // 4``, with a line saying how much was
    left out between (a tool printing 300 MB held 5.7 GB).
    """
    if keep is not None:
        return _run_kept(argv, limit, keep, cwd, env, stderr == STDOUT)
    given = None if input is not None else open(stdin or os.devnull, "rb")
    try:
        process = subprocess.Popen(list(argv), stdin=PIPE if input is not None else given,
                                   stdout=stdout, stderr=stderr, cwd=cwd, env=env,
                                   close_fds=True, text=text,
                                   errors="replace" if text else None)
    finally:
        if given is not None:
            given.close()
    try:
        out, err = process.communicate(input, timeout=limit)
    except subprocess.TimeoutExpired:
        kill_tree(process)
        out, err = process.communicate()
        raise TimeLimit(limit, _text(out) + _text(err)) from None
    except BaseException:
        kill_tree(process)
        process.wait()
        raise
    return Finished(process.returncode, out, err)


def _run_kept(argv, limit, keep: int, cwd, env, merged: bool) -> Finished:
    """``run`` with standard output (and error, or merged into it) read up to ``keep``."""
    process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=PIPE,
                               stderr=STDOUT if merged else PIPE, cwd=cwd, env=env,
                               close_fds=True)
    kept = [_Kept(keep) for _ in range(1 if merged else 2)]
    readers = [threading.Thread(target=k.read, args=(pipe,), daemon=True)
               for k, pipe in zip(kept, (process.stdout, process.stderr))]
    for reader in readers:
        reader.start()
    try:
        process.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        kill_tree(process)
        process.wait()
        for reader in readers:
            reader.join()
        raise TimeLimit(limit, "".join(k.text() for k in kept)) from None
    except BaseException:
        kill_tree(process)
        process.wait()
        raise
    for reader in readers:
        reader.join()
    return Finished(process.returncode, kept[0].text(), kept[1].text() if len(kept) > 1 else "")


class _Kept:
    """What a pipe printed: its first ``keep`` bytes and its last ``keep // 4``."""

    def __init__(self, keep: int) -> None:
        self.keep, self.head, self.tail, self.dropped = keep, bytearray(), bytearray(), 0

    def read(self, pipe) -> None:
        with pipe:
            while chunk := pipe.read1(1 << 16):
                room = self.keep - len(self.head)
                self.head += chunk[:room]
                self.tail += chunk[room:] if room > 0 else chunk
                cut = len(self.tail) - self.keep // 4
                if cut > 0:
                    del self.tail[:cut]
                    self.dropped += cut

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output not shown ...]\n" if self.dropped else ""
        return (bytes(self.head).decode(errors="replace") + middle
                + bytes(self.tail).decode(errors="replace"))


def kill_tree(process: subprocess.Popen) -> None:
    """Kill ``process`` and every process it started that is still running beneath it.

    The children stay in the build's process group, so that an interrupt from the
    terminal still reaches them; they are found through /proc where there is one.
    """
    for pid in (*_descendants(process.pid), process.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _descendants(pid: int) -> list[int]:
    """The processes below ``pid``, deepest first; none where /proc cannot tell."""
    parents: dict[int, list[int]] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        children = [child for parent in frontier for child in parents.get(parent, ())]
        found = children + found
        frontier = children
    return found


def _text(part: str | bytes | None) -> str:
    if part is None:
        return ""
    return part.decode(errors="replace") if isinstance(part, bytes) else part
