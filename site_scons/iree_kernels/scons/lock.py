"""The build folder: its marker (the build made it) and its lock (one scons at a time in a checkout)."""
from __future__ import annotations

import errno
import fcntl
import os
import re
import stat
import time

from iree_kernels.core.files import kind_of, write_atomically
from iree_kernels.scons.reporting import fail

# Written into the build folder by the build that made it: 'scons -c' removes a folder only
# where it is, and then only what a build writes there.
MARKER = ".iree-kernels-build"
_MARKER_TEXT = ("This folder is written by the iree-kernels build (BUILD_DIR); 'scons -c' "
                "removes what the build wrote in it.\n")
# The names a build writes at the top of its folder (targets' folders: llvm-cpu, cuda-sm_80, ...).
_WRITTEN = re.compile(r"^(\.scons-lock|\.sconsign\.\w+|\.tool-versions\.json|\.file-memo\.json|"
                      r"\.missing-tools|"
                      r"\.tmp-\d+-.*|"
                      r"llvm-cpu|vulkan|cuda(-[A-Za-z0-9_]+)?|hip(-[A-Za-z0-9_]+)?|kernels|"
                      r"models|release|bench|codegen-cache|remote-cache|\.families|"
                      + re.escape(MARKER) + r")$")


def written_by_a_build(name: str) -> bool:
    """Whether a build writes an entry of this name at the top of its folder."""
    return bool(_WRITTEN.match(name))


def claim_build_folder(folder: str, named: str, write: bool = True) -> None:
    """``folder`` (BUILD_DIR=``named``) is one the build made, or new, or empty: marked as the
    build's (unless not ``write``: a dry run). A folder holding what no build writes, and
    no marker, is refused: 'scons -c' would remove it."""
    if os.path.isfile(os.path.join(folder, MARKER)) and not os.path.islink(
            os.path.join(folder, MARKER)):
        return
    try:
        entries = sorted(os.listdir(folder))
    except FileNotFoundError:
        entries = []
    except OSError as e:
        fail(f"BUILD_DIR={named}: cannot read the folder: {e.strerror}")
    foreign = [name for name in entries if not written_by_a_build(name)
               and not os.path.isfile(os.path.join(folder, name, MARKER))]   # a nested build
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3
                                          else "")
        fail(f"BUILD_DIR={named}: the folder holds what the build did not write ({shown}) and "
             f"no {MARKER} marker; the build writes only into a folder it made: name a new or "
             "empty one")
    if write:
        try:
            os.makedirs(folder, exist_ok=True)
            write_atomically(os.path.join(folder, MARKER), _MARKER_TEXT)
        except OSError as e:
            fail(f"BUILD_DIR={named}: cannot write {os.path.join(folder, MARKER)}: {e.strerror}")

_held_locks: list[int] = []


def lock_build_folder(folder: str, wait: float, shared: bool = False) -> None:
    """Hold ``folder``/.scons-lock for this process's life; wait up to ``wait`` s for another scons.

    Two builds in one checkout would write the same files and SCons's records.
    ``shared``: a look (-n, --question), which writes nothing: it waits for a
    build only, and where the lock cannot be made (a read-only checkout) it
    goes on without.
    """
    path = os.path.join(folder, ".scons-lock")
    try:
        if not shared:
            os.makedirs(folder, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                     | os.O_NONBLOCK, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            fail(f"{path} is a symbolic link; the build never writes through one: remove it")
        if shared and e.errno in (errno.EACCES, errno.EROFS, errno.EPERM):
            return
        fail(f"BUILD_DIR: cannot create {path}: {e.strerror}")
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        fail(f"{path} is {kind_of(kind)}, not a regular file: remove it")
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                fail(f"another scons is building in this checkout (it holds {path}); waited "
                     f"{wait:g} s (LOCK_WAIT); run again when it has finished")
            time.sleep(0.1)
    _held_locks.append(fd)
