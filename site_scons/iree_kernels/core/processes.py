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
        env: Mapping[str, str] | None = None, text: bool = True) -> Finished:
    """Run ``argv`` to its end within ``limit`` seconds (None: no limit).

    ``stdin``: a file to read (default: nothing), or ``input`` to write to it.
    ``stdout``/``stderr``: PIPE (captured), STDOUT (stderr merged), or an open
    file. OSError where the program cannot be started; TimeLimit past the limit.
    """
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
