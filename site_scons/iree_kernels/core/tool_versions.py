"""Tools' versions kept between runs, so that a build that changes nothing runs no tool.

A version is kept with the stamp of the program's file and of the shared libraries beside it
(IREE's iree-compile is a small binary loading libIREECompiler.so from its folder): size,
modification and change times, inode. A tool whose stamp differs is asked again. Only native
programs (ELF files) are kept: a script's version is what it runs, which can change under it.
"""
from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from iree_kernels.core.stat_memo import file_stamp, read_record, write_record

FILE = ".tool-versions.json"
FORMAT = 1
RECORD_LIMIT = 16 * 1024 * 1024       # bytes: a record of a few programs is a few KiB
_ELF = b"\x7fELF"


def stamp(program: str) -> list | None:
    """What changes when ``program`` (a path, or a name looked up on PATH) is replaced; None
    if it is not a native program found here."""
    found = program if os.path.isabs(program) else shutil.which(program)
    if not found:
        return None
    real = os.path.realpath(found)
    try:
        with open(real, "rb") as f:
            if f.read(len(_ELF)) != _ELF:
                return None
        folder = Path(real).parent
        files = [Path(real), *sorted(p for p in folder.glob("lib*.so*") if p.is_file())]
        return [[str(p), *file_stamp(p)] for p in files]
    except OSError:
        return None


class VersionRecord:
    """The versions kept in ``path``; ``writable`` False: read, never written (a dry run)."""

    def __init__(self, path: str | os.PathLike, writable: bool) -> None:
        self.path, self.writable = Path(path), writable
        self._entries = read_record(self.path, FORMAT, "versions", RECORD_LIMIT)
        self._lock = threading.Lock()       # steps on SCons's job threads ask versions too

    def get(self, program: str, flag: str, current: list | None) -> str | None:
        """The version kept for ``program`` asked with ``flag`` if its stamp is ``current``."""
        entry = self._entries.get(f"{program} {flag}")
        if current is None or not isinstance(entry, dict) or entry.get("stamp") != current \
                or not isinstance(entry.get("version"), str):
            return None
        return entry["version"]

    def put(self, program: str, flag: str, current: list | None, version: str) -> None:
        if current is None or not self.writable:
            return
        with self._lock:
            self._entries[f"{program} {flag}"] = {"stamp": current, "version": version}
            write_record(self.path, FORMAT, "versions", self._entries)
