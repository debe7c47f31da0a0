"""The one integrity-checked store behind both caches: SCons's (CACHE_DIR, tool ``iree_cache``) and the codegen cache.

An entry is files in one folder, named by its cache (SCons's build signature,
the codegen key), and beside them its digest record ``<name>.sha256``
(``integrity``: the SHA-256 of each file, signed where a key is configured).
A ``Store`` is what one build may do with such entries:

- publish: each file is written beside its place (``.tmp-*``), the record
  made from what was written and put in place, then the files renamed in. A
  reader finds an entry's files whole, under a record naming them, or a miss.
  Files and folders get the permissions the umask gives (``files``: 0666,
  0777 for executables and folders, before the umask), so a cache CI writes
  is readable by the users the umask lets in.
- read: the record and every file are opened without following links, the
  record believed (``integrity``: format, signature) and every file read or
  copied has the SHA-256 recorded; else ``Refused`` says why in one line,
  naming the file. What a build takes is the bytes it checked.
- read-only: a store this build only reads never writes, removes or touches
  anything in its folders.
- remote: with a remote cache (``remote_cache``), an entry is fetched into
  the folder on request (then read and checked as any other) and an entry
  published is uploaded, both under ``remote_protocol.action_key``.

Not for: where entries live and what they are named (the caches), deciding
whether a build only reads (``scons.only_reads``), the record's format and the
key (``integrity``), the HTTP protocol (``remote_cache``).
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from iree_kernels.cache import integrity, remote_cache, remote_protocol
from iree_kernels.core.files import (
    NotRegularFile,
    is_regular,
    put_in_place,
    read_regular,
    remove_quietly,
    stage_content,
    stage_copy,
    write_atomically,
)

RECORD_SUFFIX = ".sha256"
READ_ONLY = "kept (read-only cache)"

# A file's content, or the path of a file to copy it from.
Source = bytes | str | os.PathLike


class Refused(Exception):
    """Why an entry is not taken: one line, naming the file, never a secret."""


@dataclass(frozen=True)
class Entry:
    """The files ``files`` in ``folder``, recorded in ``<name>.sha256`` beside them."""
    folder: Path
    name: str
    files: tuple[str, ...]

    @property
    def record(self) -> Path:
        return self.folder / (self.name + RECORD_SUFFIX)

    @property
    def paths(self) -> tuple[Path, ...]:
        return tuple(self.folder / name for name in self.files)

    def present(self) -> bool:
        """Whether the record and every file are there, links included (reading says if they are good)."""
        return all(os.path.lexists(p) for p in (self.record, *self.paths))

    def whole(self) -> bool:
        """Whether the record and every file are there as regular files."""
        return all(is_regular(p) for p in (self.record, *self.paths))

    def subject(self, file: str) -> str:
        """How messages name ``file``: "it" where the entry is that one file."""
        return "it" if file == self.name else file


@dataclass(frozen=True)
class Store:
    """What this build does with entries: signs and verifies with ``trust``, only reads, or also a remote cache."""
    read_only: bool = False
    trust: integrity.Trust = field(default_factory=integrity.configured, repr=False,
                                   compare=False)
    remote: remote_cache.RemoteCache | None = field(default=None, compare=False)
    namespace: str = ""          # the cache's entries on the remote: remote_protocol.action_key
    # The folder is this build's own copy of the remote cache: the remote's entries are
    # fetched into it even where the build only reads (nothing else is written then).
    mirror: bool = False

    def recorded(self, entry: Entry) -> dict[str, str]:
        """The SHA-256 the entry's record gives each of its files; Refused if it cannot be believed."""
        try:
            record = read_regular(entry.record)
        except FileNotFoundError:
            raise Refused("no SHA-256 is recorded beside it") from None
        except NotRegularFile as e:
            raise Refused(f"its digest record {e.strerror}") from None
        except OSError as e:
            raise Refused(f"its digest record is unreadable ({e.strerror})") from None
        try:
            return self.trust.check(record, entry.files)
        except integrity.Untrusted as e:
            raise Refused(str(e)) from None

    def read(self, entry: Entry) -> dict[str, bytes]:
        """Every file of the entry by name, read once and checked; Refused naming one that is not as recorded."""
        recorded = self.recorded(entry)
        found = {}
        for name, path in zip(entry.files, entry.paths):
            try:
                data = read_regular(path)
            except OSError as e:
                raise Refused(_unreadable(entry, name, e)) from None
            _check(entry, name, hashlib.sha256(data).hexdigest(), recorded[name])
            found[name] = data
        self.touch(entry)
        return found

    def copy(self, entry: Entry, name: str, destination: str | os.PathLike) -> None:
        """Copy the entry's file ``name`` to ``destination`` whole if the copy is as recorded; else Refused, nothing copied."""
        recorded = self.recorded(entry)[name]
        try:
            staged, digest = stage_copy(entry.folder / name, destination)
        except OSError as e:
            raise Refused(_unreadable(entry, name, e)) from None
        try:
            _check(entry, name, digest, recorded)
        except Refused:
            remove_quietly(staged)
            raise
        put_in_place(staged, destination)
        self.touch(entry)

    def publish(self, entry: Entry, sources: Mapping[str, Source]) -> bool:
        """Write the entry (file name -> content, or a file to copy) and its record, then upload it.

        False, and nothing written, where this build only reads.

        OSError (NotRegularFile for a source that is a link) where it cannot be
        written; no file of it is then put in place.
        """
        if self.read_only:
            return False
        staged: dict[str, str] = {}
        try:
            digests = {}
            for name, path in zip(entry.files, entry.paths):
                source = sources[name]
                staged[name], digests[name] = (stage_content(path, source)
                                               if isinstance(source, bytes)
                                               else stage_copy(source, path))
            self._put_in_place(entry, staged, self.trust.record(digests))
        finally:
            for temporary in staged.values():
                remove_quietly(temporary)
        self.upload(entry)
        return True

    def fetch(self, entry: Entry, what: str) -> bool:
        """Copy the entry and its record from the remote cache into the folder (checked when read); whether it came."""
        if self.remote is None or (self.read_only and not self.mirror):
            return False
        found = self.remote.fetch(self._remote_key(entry), [*entry.files, entry.record.name], what)
        if found is None:
            return False
        staged: dict[str, str] = {}
        try:
            for name, path in zip(entry.files, entry.paths):
                staged[name], _ = stage_content(path, found[name])
            self._put_in_place(entry, staged, found[entry.record.name])
        except OSError as e:
            self.remote.warn(f"cannot copy the remote cache's entry of {what} into "
                             f"{entry.folder}: {e.strerror}")
            return False
        finally:
            for temporary in staged.values():
                remove_quietly(temporary)
        return True

    def discard(self, entry: Entry) -> str:
        """Take a refused entry out of its folder where this build may write; what was done, as messages say it."""
        if self.read_only:
            return READ_ONLY
        try:
            for path in (*entry.paths, entry.record):
                path.unlink(missing_ok=True)
        except OSError:
            return "could not be removed"
        return "removed"

    def touch(self, entry: Entry) -> None:
        """Mark the entry used, so that pruning what is old spares what builds still take."""
        if self.read_only:
            return
        for path in entry.paths:
            try:
                os.utime(path, follow_symlinks=False)
            except OSError:
                pass                  # not ours to touch

    def write_note(self, path: Path, content: bytes) -> None:
        """Write a file beside the entries that nothing takes into a build (a source, a marker)."""
        if not self.read_only:
            write_atomically(path, content)

    def create(self, folder: str | os.PathLike) -> None:
        """Create the store's folder, with the permissions the umask gives (OSError if it cannot be)."""
        if not self.read_only:
            os.makedirs(folder, exist_ok=True)

    def _put_in_place(self, entry: Entry, staged: dict[str, str], record: bytes) -> None:
        # The record first: a reader never finds the files without one.
        write_atomically(entry.record, record)
        for name in list(staged):
            put_in_place(staged.pop(name), entry.folder / name)

    def upload(self, entry: Entry) -> None:
        """Send the entry, as it is in the folder, to the remote cache (if any, and writable)."""
        if self.remote is None or self.read_only:
            return
        try:
            files = {p.name: read_regular(p) for p in (*entry.paths, entry.record)}
        except OSError:
            return                    # replaced meanwhile: nothing checked to upload
        self.remote.store(self._remote_key(entry), files)

    def _remote_key(self, entry: Entry) -> str:
        return remote_protocol.action_key(self.namespace, entry.name)


def _unreadable(entry: Entry, name: str, error: OSError) -> str:
    if isinstance(error, NotRegularFile):
        return f"{entry.subject(name)} {error.strerror}"
    return f"{entry.subject(name)} cannot be read ({error.strerror})"


def _check(entry: Entry, name: str, found: str, recorded: str) -> None:
    if found != recorded:
        raise Refused(f"{entry.subject(name)} does not have the SHA-256 recorded ({found[:12]}..., "
                      f"not {recorded[:12]}...)")
