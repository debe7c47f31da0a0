"""Release archives: writing one bit-for-bit reproducibly, and reading one back with suspicion.

A release is one gzip'd tar holding every module at its repo-relative path and
the lock record (``lock.json``). Archives are bit-for-bit reproducible:
members sorted, owners and modes normalized, every timestamp
SOURCE_DATE_EPOCH. Reading one refuses what is no release this build wrote:
unsafe or doubled member names, members that are not regular files, members
the lock record does not name, gzip bombs.

Not for: what the lock record holds (``lock``), where the timestamp comes from
(``provenance``), comparing a release with a checkout (``compare``).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import NotRegularFile, open_file
from iree_kernels.release.lock import (LOCK_FORMAT, LOCK_MEMBER, MODULE_KEYS, MODULE_SHAPE,
                                       shape_error)

MEMBER_MODE = 0o644


def archive_bytes(members: dict[str, bytes], mtime: int) -> bytes:
    """A .tar.gz of ``members`` (name -> content) that depends on nothing but its arguments."""
    tar_buffer = io.BytesIO()
    with tarfile.open(fileobj=tar_buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mtime = mtime
            info.mode = MEMBER_MODE
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(members[name]))
    gz_buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=gz_buffer, mtime=mtime) as gz:
        gz.write(tar_buffer.getvalue())
    return gz_buffer.getvalue()


@dataclass(frozen=True)
class Release:
    """What an archive holds: its lock record and the SHA-256 of every member."""
    path: str
    lock: dict
    members: dict[str, str]


# What verify-release reads of an archive: the archive may decompress to at most
# MAX_RELEASE_BYTES and to at most MAX_RATIO times its size (a gzip bomb is refused
# early); lock.json is read whole, up to MAX_LOCK_BYTES; modules are hashed as they stream.
MAX_RELEASE_BYTES = 8 << 30
MAX_RATIO = 200
MIN_BUDGET = 256 << 20
MAX_LOCK_BYTES = 64 << 20


def _check_lock(lock: dict, path: str) -> None:
    modules = lock.get("modules")
    if not isinstance(modules, list) or not isinstance(lock.get("source_date_epoch"), int):
        raise UserError(f"{LOCK_MEMBER} lacks its modules or its source_date_epoch", file=path)
    if not modules:
        raise UserError(f"{LOCK_MEMBER} lists no modules: nothing to verify", file=path)
    seen = set()
    for index, module in enumerate(modules):
        missing = [k for k in MODULE_KEYS if not isinstance(module, dict) or k not in module]
        if missing:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} lacks {', '.join(missing)}",
                            file=path)
        problem = shape_error(module, MODULE_SHAPE, f"module #{index + 1}")
        if problem:
            raise UserError(f"{LOCK_MEMBER}: {problem}", file=path)
        key = (str(module["target"]), str(module["model"]))
        if key in seen:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} ({key[0]}/{key[1]}) is "
                            "listed twice", file=path)
        seen.add(key)
        where = module["module"]
        if not isinstance(where, dict) or not isinstance(where.get("path"), str) \
                or not isinstance(where.get("sha256"), str):
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1}'s module has no path and "
                            "sha256", file=path)
        why = unsafe_member_name(where["path"])
        if why:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} is at {where['path']!r}, "
                            f"{why}", file=path)


def unsafe_member_name(name: str) -> str | None:
    """Why ``name`` is no member a release holds (absolute, '..', odd characters); None if fine."""
    if not name or name.startswith("/") or "\\" in name:
        return "not a relative path"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "a path with an empty, '.' or '..' part"
    if any(not c.isprintable() for c in name):
        return "a name holding a control character"
    return None


class _Bounded(io.RawIOBase):
    """What ``source`` decompresses to, OverflowError past ``budget`` bytes."""

    def __init__(self, source, budget: int) -> None:
        self._source, self._left = source, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._source.read(min(len(buffer), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise OverflowError()
        buffer[:len(data)] = data
        return len(data)


def _member_kind(info: tarfile.TarInfo) -> str:
    for test, kind in ((info.isdir, "a folder"), (info.issym, "a symbolic link"),
                       (info.islnk, "a hard link"), (info.ischr, "a character device"),
                       (info.isblk, "a block device"), (info.isfifo, "a FIFO")):
        if test():
            return kind
    return "not a regular file"


def read_release(path: str | Path) -> Release:
    """The lock record and members' SHA-256 of the archive ``path``; UserError naming it where it is no release.

    Refused: what is not a regular file (a FIFO, a device: never read), an
    archive decompressing to more than its budget, members that are not
    regular files, have unsafe names, come twice or are not named by the lock
    record, a lock record listing no module.
    """
    where = str(path)
    members, lock_data = {}, None
    try:
        with open_file(path) as raw:
            size = os.fstat(raw.fileno()).st_size
            budget = min(MAX_RELEASE_BYTES, max(MIN_BUDGET, MAX_RATIO * size))
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                stream = io.BufferedReader(_Bounded(gz, budget))
                with tarfile.open(fileobj=stream, mode="r|") as tar:
                    for info in tar:
                        why = unsafe_member_name(info.name)
                        if why:
                            raise UserError(f"member {info.name!r} is {why}", file=where)
                        if not info.isreg():
                            raise UserError(f"member {info.name} is {_member_kind(info)}, not a "
                                            "regular file", file=where)
                        if info.issparse():     # its holes are read as zeros, unbounded
                            raise UserError(f"member {info.name} is a sparse file, which no "
                                            "release holds", file=where)
                        if info.size > budget:
                            raise OverflowError()       # a bomb: said as one
                        if info.name in members:
                            raise UserError(f"member {info.name} is in the archive twice",
                                            file=where)
                        content = tar.extractfile(info)
                        digest = hashlib.sha256()
                        if info.name == LOCK_MEMBER:
                            if info.size > MAX_LOCK_BYTES:
                                raise UserError(f"{LOCK_MEMBER} is larger than "
                                                f"{MAX_LOCK_BYTES >> 20} MiB", file=where)
                            lock_data = content.read()
                            digest.update(lock_data)
                        else:
                            for block in iter(lambda: content.read(1 << 20), b""):
                                digest.update(block)
                        members[info.name] = digest.hexdigest()
                # After the tar's end only zeros (its padding): a second gzip member or tar
                # appended was read past, unverified.
                for block in iter(lambda: stream.read(1 << 20), b""):
                    if block.count(0) != len(block):
                        raise UserError("holds data after the end of its tar archive (a "
                                        "second archive appended?)", file=where)
    except FileNotFoundError:
        raise UserError("release archive not found", file=where) from None
    except NotRegularFile as e:
        raise UserError(f"the release archive {e.strerror}", file=where) from None
    except OverflowError:
        raise UserError(f"decompresses to more than {budget >> 20} MiB ({MAX_RATIO} times "
                        f"its size, at most {MAX_RELEASE_BYTES >> 30} GiB): not a release "
                        "archive this build reads", file=where) from None
    except (OSError, tarfile.TarError, EOFError, zlib.error) as e:
        raise UserError(f"not a release archive (.tar.gz): {e}", file=where) from None
    if lock_data is None:
        raise UserError(f"not a release archive: it holds no {LOCK_MEMBER}", file=where)
    try:
        lock = json.loads(lock_data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"{LOCK_MEMBER} is not JSON: {e}", file=where)
    except RecursionError:
        raise UserError(f"{LOCK_MEMBER} nests deeper than any lock record", file=where) from None
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT:
        raise UserError(f"{LOCK_MEMBER} is not a lock record of format {LOCK_FORMAT}",
                        file=where)
    _check_lock(lock, where)
    named = {LOCK_MEMBER, *(m["module"]["path"] for m in lock["modules"])}
    unnamed = sorted(set(members) - named)
    if unnamed:
        raise UserError(f"member {unnamed[0]} is not a module its {LOCK_MEMBER} names"
                        + (f" (nor {len(unnamed) - 1} more)" if len(unnamed) > 1 else ""),
                        file=where)
    return Release(where, lock, members)
