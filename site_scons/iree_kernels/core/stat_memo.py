"""Values computed from a file, kept while the file stays as it was (size, times, inode).

A build that changes nothing must not read a model of gigabytes to hash it again, nor import
a package and parse a model to list the files it names. ``StatMemo`` keeps, by file and by
what was computed from it, the file's stamp with the value, in one JSON file, and computes
a value again only where the stamp differs. A dry run reads the record and writes nothing.
Not for: what a step builds (SCons's signatures), programs' versions (``tool_versions``).
"""
from __future__ import annotations

import json
import hashlib
import os
import threading
from pathlib import Path
from typing import Any, Callable

from iree_kernels.core.files import read_text, write_atomically

FILE = ".file-memo.json"
FORMAT = 1
RECORD_LIMIT = 64 * 1024 * 1024       # bytes: a few hundred bytes a file


def file_stamp(path: str | os.PathLike) -> list[int]:
    """What changes when the file at ``path`` is written or replaced."""
    s = os.stat(path)
    return [s.st_size, s.st_mtime_ns, s.st_ctime_ns, s.st_ino]


def read_record(path: Path, format: int, key: str, limit: int) -> dict:
    """The entries (``key``) of a build's JSON record of ``format``; none where the file is not
    a record a build wrote (a FIFO, a link to /dev/zero, JSON nested too deep, another shape):
    it is then written anew."""
    try:
        data = json.loads(read_text(path, limit=limit))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("format") != format or \
            not isinstance(data.get(key), dict):
        return {}
    return data[key]


def write_record(path: Path, format: int, key: str, entries: dict) -> None:
    """``entries`` written as ``read_record`` reads them; not where the checkout is read-only
    (taken again next time)."""
    try:
        write_atomically(path, json.dumps({"format": format, key: entries}, indent=1,
                                          sort_keys=True) + "\n")
    except OSError:
        pass


class StatMemo:
    """The values kept in ``path``; ``writable`` False: read, never written (a dry run)."""

    def __init__(self, path: str | os.PathLike, writable: bool) -> None:
        self.path, self.writable = Path(path), writable
        self._entries = read_record(self.path, FORMAT, "values", RECORD_LIMIT)
        self._lock = threading.Lock()

    def value(self, what: str, path: str | os.PathLike, compute: Callable[[Path], Any],
              valid: Callable[[Any], bool]) -> Any:
        """``compute(path)`` (a JSON value), or what it gave for ``what`` while the file was as
        it is now; a kept value that is not ``valid`` (a record edited by hand) is computed
        again."""
        path = Path(path)
        stamp = file_stamp(path)
        key = f"{what} {path}"
        entry = self._entries.get(key)
        if isinstance(entry, dict) and entry.get("stamp") == stamp and "value" in entry and \
                valid(entry["value"]):
            return entry["value"]
        value = compute(path)
        if self.writable:
            with self._lock:
                self._entries[key] = {"stamp": stamp, "value": value}
                write_record(self.path, FORMAT, "values", self._entries)
        return value


def computed_each_time() -> StatMemo:
    """A memo that keeps nothing (where no build folder is claimed: -h, a look at none)."""
    return StatMemo(os.devnull, writable=False)


def sha256(memo: StatMemo, path: str | os.PathLike) -> str:
    """The file's SHA-256, read in chunks, or what ``memo`` kept of it while the file was as it
    is (a no-op must not read a model of gigabytes)."""
    return memo.value("sha256", path, _sha256, _is_digest)


def _is_digest(value) -> bool:
    return isinstance(value, str) and len(value) == 64


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()
