"""Whether a cache entry may be taken: its files' SHA-256 and, with a key, a signature over them.

Both caches (SCons's CacheDir through the tool ``iree_cache``, and
``codegen_cache``) keep their entries in a ``store.Store``, which writes beside
each entry one digest record, ``<entry>.sha256``, in one format::

    # iree-kernels cache record 1
    <sha256>  <file name>                        (one line per file, as sha256sum writes)
    # hmac-sha256 <key id> <mac>                 (only when the writer has a key)

The last line is HMAC-SHA256, under the key, of every byte before it; the key
id (16 hex digits of a SHA-256 of the key) says which key signed without
revealing it. The names bind the record to its entry: entries are named by
their cache key, so a signed record copied to another entry names the wrong
files.

A reader takes an entry only when the record is in this format, names each
file the reader takes with the SHA-256 that file has, and, when the reader
has a key, is signed with that key. Unsigned, mis-signed and foreign-key
records are refused then (``Untrusted``, one line).

The key comes from the environment: ``IREE_KERNELS_CACHE_KEY`` holds it,
or ``IREE_KERNELS_CACHE_KEY_FILE`` names a file holding it. It is never in a
repr, a message, a cache key or a command line.

Not for: reading, writing or checking the files themselves (``store``), where
entries live or what they are named (the caches). HMAC is
symmetric: whoever holds the key can sign, so it keeps out writers without
the key, not a key holder.
"""
from __future__ import annotations

import hashlib
import hmac
import os
import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import open_file

KEY_VARIABLE = "IREE_KERNELS_CACHE_KEY"
KEY_FILE_VARIABLE = "IREE_KERNELS_CACHE_KEY_FILE"
MAX_KEY_FILE_BYTES = 64 * 1024       # a key file larger than this is not one (/dev/zero, a log)
HEADER = "# iree-kernels cache record 1"
MIN_KEY_BYTES = 16
_DIGEST_RE = re.compile(r"([0-9a-f]{64})  ([A-Za-z0-9._-]+)")
_SIGNATURE_RE = re.compile(r"# hmac-sha256 ([0-9a-f]{16}) ([0-9a-f]{64})")
_SIGNATURE_PREFIX = "# hmac-sha256 "


class Untrusted(Exception):
    """Why an entry is not taken: one line, naming no secret."""


@dataclass(frozen=True)
class Trust:
    """What a cache reader verifies and a writer signs with: a key, or none."""
    key: bytes | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.key is not None and len(self.key) < MIN_KEY_BYTES:
            raise UserError(f"the cache signing key is too short: it needs at least "
                            f"{MIN_KEY_BYTES} bytes")

    def __repr__(self) -> str:
        return f"Trust(key_id={self.key_id!r})"

    @property
    def key_id(self) -> str | None:
        """Names the key in records and messages; reveals nothing of it."""
        if self.key is None:
            return None
        return hashlib.sha256(b"iree-kernels cache key id\n" + self.key).hexdigest()[:16]

    def record(self, digests: Mapping[str, str]) -> bytes:
        """The digest record of files named ``digests`` (name -> SHA-256), signed where there is a key."""
        lines = [HEADER]
        for name, digest in digests.items():
            if not _DIGEST_RE.fullmatch(f"{digest}  {name}"):
                raise ValueError(f"cannot record {name!r} with SHA-256 {digest!r}")
            lines.append(f"{digest}  {name}")
        body = ("\n".join(lines) + "\n").encode("ascii")
        if self.key is None:
            return body
        return body + f"{_SIGNATURE_PREFIX}{self.key_id} {self._mac(body)}\n".encode("ascii")

    def check(self, record: bytes, names: Iterable[str]) -> dict[str, str]:
        """The SHA-256 ``record`` gives each of ``names``; Untrusted if it cannot be believed."""
        try:
            lines = record.decode("ascii").split("\n")
        except UnicodeDecodeError:
            raise Untrusted("its digest record is not text") from None
        if lines[0] != HEADER or lines[-1] != "":
            raise Untrusted("its digest record is not in the format this build reads")
        lines.pop()
        signature = None
        if lines[-1].startswith(_SIGNATURE_PREFIX):
            signature = _SIGNATURE_RE.fullmatch(lines.pop())
            if signature is None:
                raise Untrusted("its digest record has a malformed signature line")
        digests = {}
        for line in lines[1:]:
            found = _DIGEST_RE.fullmatch(line)
            if found is None:
                raise Untrusted("its digest record has a malformed line")
            digests[found.group(2)] = found.group(1)
        if self.key is not None:
            self._check_signature(record, signature)
        for name in names:
            if name not in digests:
                raise Untrusted(f"its digest record does not name {name}")
        return digests

    def _check_signature(self, record: bytes, signature: re.Match | None) -> None:
        if signature is None:
            raise Untrusted("it is not signed, and this build verifies signatures "
                            f"(key {self.key_id})")
        key_id, mac = signature.groups()
        if key_id != self.key_id:
            raise Untrusted(f"it is signed with another key ({key_id}, not this build's "
                            f"{self.key_id})")
        body = record[:record.rindex(_SIGNATURE_PREFIX.encode("ascii"))]
        if not hmac.compare_digest(mac, self._mac(body)):
            raise Untrusted("its signature does not match its digest record")

    def _mac(self, body: bytes) -> str:
        return hmac.new(self.key, body, hashlib.sha256).hexdigest()


def from_environment(environ: Mapping[str, str] = os.environ,
                     require_signed: bool = False) -> Trust:
    """The key ``IREE_KERNELS_CACHE_KEY`` holds or ``IREE_KERNELS_CACHE_KEY_FILE`` names.

    A UserError (one line, never the key) where both are set, the file cannot be
    read, the key is too short, or ``require_signed`` and there is no key.
    """
    given, path = environ.get(KEY_VARIABLE, ""), environ.get(KEY_FILE_VARIABLE, "")
    if given and path:
        raise UserError(f"set {KEY_VARIABLE} or {KEY_FILE_VARIABLE}, not both")
    if path:
        try:
            with open_file(path) as f:
                key = f.read(MAX_KEY_FILE_BYTES + 1)
        except OSError as e:
            raise UserError(f"{KEY_FILE_VARIABLE}: cannot read {path}: {e.strerror}") from None
        if len(key) > MAX_KEY_FILE_BYTES:
            raise UserError(f"{KEY_FILE_VARIABLE}: {path} is larger than "
                            f"{MAX_KEY_FILE_BYTES // 1024} KiB, which no key is")
        key = key.strip()
        if not key:
            raise UserError(f"{KEY_FILE_VARIABLE}: {path} is empty")
        return Trust(key)
    if given:
        return Trust(given.strip().encode("utf-8"))
    if require_signed:
        raise UserError(f"CACHE_REQUIRE_SIGNED needs the cache signing key: set "
                        f"{KEY_FILE_VARIABLE} to a file holding it (or {KEY_VARIABLE})")
    return Trust()


_configured: Trust | None = None


def configure(trust: Trust) -> None:
    """Make ``trust`` what this process's caches sign and verify with."""
    global _configured
    _configured = trust


def configured() -> Trust:
    """What this process's caches sign and verify with; at first, the environment's key."""
    global _configured
    if _configured is None:
        _configured = from_environment()
    return _configured
