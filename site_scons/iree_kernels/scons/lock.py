"""One scons at a time in a checkout: the build folder's lock file."""
from __future__ import annotations

import errno
import fcntl
import os
import stat
import time

from iree_kernels.core.files import kind_of
from iree_kernels.scons.reporting import fail

_held_locks: list[int] = []


def lock_build_folder(folder: str, wait: float) -> None:
    """Hold ``folder``/.scons-lock for this process's life; wait up to ``wait`` s for another scons.

    Two builds in one checkout would write the same files and SCons's records.
    """
    path = os.path.join(folder, ".scons-lock")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                     | os.O_NONBLOCK, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            fail(f"{path} is a symbolic link; the build never writes through one: remove it")
        fail(f"BUILD_DIR: cannot create {path}: {e.strerror}")
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        fail(f"{path} is {kind_of(kind)}, not a regular file: remove it")
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                fail(f"another scons is building in this checkout (it holds {path}); waited "
                     f"{wait:g} s (LOCK_WAIT); run again when it has finished")
            time.sleep(0.1)
    _held_locks.append(fd)
