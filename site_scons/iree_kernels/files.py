"""Writing files so that an interrupted build never leaves half of one."""
from __future__ import annotations

import os
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
