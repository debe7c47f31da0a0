"""Writing files so that an interrupted build never leaves half of one; reading files that must be files.

Files are created as ``open()`` creates them: the umask takes its bits from
the mode, so a folder shared through group or world permissions (a build
cache written by CI) stays readable by the users the umask lets in. Files a
user gives (manifests, expected outputs) are read only if regular files
(read_text), so a FIFO never blocks the build.
"""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import re
import secrets
import shutil
import stat
import tempfile

CHUNK = 1 << 20

# What a build writes aside is named .tmp-<its pid>-..., so that what a killed
# build left can be told from what a running one is writing (remove_leftovers).
SCRATCH_PREFIX = ".tmp-"
_SCRATCH = re.compile(r"\.tmp-(\d+)-")


class NotRegularFile(OSError):
    """A path that is a symbolic link, a folder or a device where a regular file was expected.

    Its ``strerror`` says which: "is a symbolic link", "is a folder", "is not a regular file".
    """


def write_atomically(path: str | os.PathLike, content: str | bytes, mode: int = 0o666) -> None:
    """Write ``content`` beside ``path``, then move it in place.

    ``mode`` is the permissions before the umask, as for ``open()``.
    """
    fd, temporary = _create_beside(path, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8") if isinstance(content, str) else content)
    except BaseException:
        remove_quietly(temporary)
        raise
    put_in_place(temporary, path)


def copy_atomically(source: str | os.PathLike, destination: str | os.PathLike) -> str:
    """Copy the regular file ``source`` to ``destination`` whole; its SHA-256.

    ``source`` is never followed if it is a link (NotRegularFile). The copy gets
    the umask's permissions (executable where ``source`` is).
    """
    temporary, digest = stage_copy(source, destination)
    put_in_place(temporary, destination)
    return digest


def link_atomically(source: str | os.PathLike, destination: str | os.PathLike) -> None:
    """``destination`` made the same file as ``source`` (a hard link; a copy where none can be).

    For a big file a step passes on unchanged: nothing is written. Safe because
    every file here is replaced by a rename, never rewritten in place, and SCons
    removes a target before building it again.
    """
    temporary = f"{os.fspath(destination)}.{secrets.token_hex(4)}.tmp"
    try:
        os.link(source, temporary)
    except OSError:
        copy_atomically(source, destination)
        return
    put_in_place(temporary, destination)


def stage_content(path: str | os.PathLike, content: bytes, mode: int = 0o666) -> tuple[str, str]:
    """``content`` written beside ``path`` (not yet in its place): the file written, and its SHA-256."""
    fd, temporary = _create_beside(path, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content)
    except BaseException:
        remove_quietly(temporary)
        raise
    return temporary, hashlib.sha256(content).hexdigest()


def stage_copy(source: str | os.PathLike, destination: str | os.PathLike) -> tuple[str, str]:
    """A copy of the regular file ``source`` beside ``destination`` (not yet in its place): the file written, and its SHA-256.

    A link is never followed (NotRegularFile); the copy is executable where ``source`` is.
    """
    with open_regular(source) as f:
        executable = os.fstat(f.fileno()).st_mode & stat.S_IXUSR
        fd, temporary = _create_beside(destination, 0o777 if executable else 0o666)
        try:
            digest = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                while chunk := f.read(CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
        except BaseException:
            remove_quietly(temporary)
            raise
    return temporary, digest.hexdigest()


def reserve_beside(path: str | os.PathLike) -> str:
    """An empty new file beside ``path`` for a tool to write to (``-o``), moved in place with
    ``put_in_place``; the caller removes it (``remove_quietly``) if the tool fails."""
    fd, temporary = _create_beside(path, 0o666)
    os.close(fd)
    return temporary


def put_in_place(temporary: str, path: str | os.PathLike) -> None:
    """Move a staged file to ``path``; it is removed if it cannot be."""
    try:
        os.replace(temporary, path)
    except BaseException:
        remove_quietly(temporary)
        raise


def write_new(path: str | os.PathLike, content: str | bytes, mode: int = 0o666) -> None:
    """Write ``content`` to ``path``, which must not exist, not even as a dangling link
    (FileExistsError: what is there is kept). Staged beside it, so never half-written."""
    fd, temporary = _create_beside(path, mode)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content.encode("utf-8") if isinstance(content, str) else content)
        os.link(temporary, path, follow_symlinks=False)
    finally:
        remove_quietly(temporary)


def link_on_the_way(root: str | os.PathLike, relative: str, itself: bool = False) -> str | None:
    """The first folder of ``relative`` (under ``root``; the file ``itself`` too) that is a
    symbolic link, or None."""
    parts = [part for part in relative.split("/") if part]
    parts = parts if itself else parts[:-1]
    for n in range(1, len(parts) + 1):
        folder = os.path.join(*parts[:n])
        try:
            if stat.S_ISLNK(os.lstat(os.path.join(root, folder)).st_mode):
                return folder
        except FileNotFoundError:
            return None
    return None


def open_regular(path: str | os.PathLike):
    """``path`` opened for reading (binary) if it is a regular file; a link is not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise NotRegularFile(errno.ELOOP, "is a symbolic link", os.fspath(path)) from None
        raise
    kind = stat.S_IFMT(os.fstat(fd).st_mode)
    if kind != stat.S_IFREG:
        os.close(fd)
        what = "is a folder" if kind == stat.S_IFDIR else "is not a regular file"
        raise NotRegularFile(errno.EINVAL, what, os.fspath(path))
    return os.fdopen(fd, "rb")


def open_file(path: str | os.PathLike):
    """``path`` opened for reading (binary), links followed, if what it names is a regular file.

    Opened without blocking (a FIFO would wait for a writer) and checked with
    fstat on what was opened: NotRegularFile says what it is ('a FIFO (named pipe)').
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFile(errno.EINVAL, f"is {kind_of(mode)}, not a regular file",
                             os.fspath(path))
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike) -> bytes:
    """The content of the regular file ``path``; NotRegularFile for a link, folder or device."""
    with open_regular(path) as f:
        return f.read()


def is_regular(path: str | os.PathLike) -> bool:
    """Whether ``path`` itself (not what a link points to) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _create_beside(path: str | os.PathLike, mode: int) -> tuple[int, str]:
    """A new file beside ``path`` (``.tmp-<random>``), open for writing, created with ``mode``."""
    directory = os.path.dirname(os.fspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    while True:
        temporary = os.path.join(directory, f"{scratch_name()}{secrets.token_hex(6)}")
        try:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, mode)
        except FileExistsError:
            continue
        return fd, temporary


def scratch_name(purpose: str = "") -> str:
    """The start of the name of something this process writes aside: ``.tmp-<pid>-<purpose>-``."""
    return f"{SCRATCH_PREFIX}{os.getpid()}-" + (f"{purpose}-" if purpose else "")


@contextlib.contextmanager
def scratch_folder(folder: str | os.PathLike, purpose: str):
    """A new folder in ``folder``, named for this process (scratch_name), removed on leaving."""
    with tempfile.TemporaryDirectory(prefix=scratch_name(purpose), dir=folder) as path:
        yield path


def remove_leftovers(folder: str | os.PathLike) -> list[str]:
    """Remove under ``folder`` what processes no longer running wrote aside; the paths removed.

    A build killed mid-write (SIGKILL, a lost machine) cannot clean up; the
    next one does. What a running process writes is kept.
    """
    removed = []
    for root, folders, files in os.walk(folder):
        for name in [*folders, *files]:
            found = _SCRATCH.match(name)
            if found and not _running(int(found.group(1))):
                path = os.path.join(root, name)
                if name in folders:
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    remove_quietly(path)
                removed.append(path)
        folders[:] = [name for name in folders if not _SCRATCH.match(name)]
    return removed


def _running(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_quietly(path: str | os.PathLike) -> None:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass


# The largest manifest, model listing or expected-outputs file read whole (bytes).
MAX_TEXT_BYTES = 64 * 1024 * 1024


def kind_of(mode: int) -> str:
    """What a file of this ``st_mode`` is, as an error names it: 'a folder', 'a FIFO (named pipe)'..."""
    for test, name in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return name
    return "a regular file" if stat.S_ISREG(mode) else "not a regular file"


def not_regular(path: str | os.PathLike) -> str | None:
    """Why ``path`` cannot be read as a file ('not found', 'a folder', ...); None for a regular file."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as e:
        return e.strerror or "not readable"
    return None if stat.S_ISREG(mode) else kind_of(mode)


def read_text(path: str | os.PathLike, limit: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of a regular file (a leading byte-order mark dropped).

    Raises OSError for what cannot be read, ValueError (saying why) for a
    folder, FIFO or device (never opened: a FIFO would block) or a file over
    ``limit`` bytes, UnicodeDecodeError for other encodings.
    """
    why = not_regular(path)
    if why == "not found":
        raise FileNotFoundError(2, "file not found", str(path))
    if why:
        raise ValueError(f"is {why}, not a regular file")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"is larger than {limit // (1024 * 1024)} MiB")
    return data.decode("utf-8-sig")
