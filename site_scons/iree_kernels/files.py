"""Writing files so that an interrupted build never leaves half of one; reading only regular files."""
from __future__ import annotations

import os
import stat
import tempfile


def write_atomically(path: str | os.PathLike, content: str | bytes, mode: int | None = None) -> None:
    """Write ``content`` beside ``path``, then move it in place (``mode``: its permissions)."""
    directory = os.path.dirname(os.fspath(path)) or "."
    os.makedirs(directory, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        binary = isinstance(content, bytes)
        with os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8") as f:
            f.write(content)
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.remove(temporary)
        raise


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
