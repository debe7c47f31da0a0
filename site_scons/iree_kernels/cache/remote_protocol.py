"""The Bazel remote cache's names and records: an entry's ``/ac/`` key and the ActionResult codec.

A Bazel HTTP remote cache keeps blobs at ``<url>/cas/<sha256>`` and action
results at ``<url>/ac/<key>``, each a Bazel ``ActionResult`` protobuf naming
its output files by path and blob digest. This module names a local cache's
entry on the server (``action_key``) and writes and reads the one part of an
ActionResult an entry needs, by hand (no protobuf package).

Not for: talking to a server, credentials, time limits (``remote_cache``);
whether an entry may be trusted (``store``, ``integrity``).
"""
from __future__ import annotations

import hashlib
import re
from typing import Iterable, Mapping

FORMAT = "iree-kernels remote cache 1"


def action_key(namespace: str, key: str) -> str:
    """The ``/ac/`` name of a local cache's entry ``key``: a SHA-256, as Bazel servers require."""
    return hashlib.sha256(f"{FORMAT}\n{namespace}\n{key}\n".encode("utf-8")).hexdigest()


# Bazel's ActionResult (build/bazel/remote/execution/v2/remote_execution.proto),
# only what an entry needs: output_files = 2 { path = 1, digest = 2 { hash = 1, size_bytes = 2 } }.

def encode_action_result(files: Mapping[str, tuple[str, int]]) -> bytes:
    """An ActionResult whose output files are ``files`` (path -> (sha256, size))."""
    out = b""
    for path, (digest, size) in files.items():
        blob_digest = _field(1, digest.encode("ascii")) + _varint_field(2, size)
        out += _field(2, _field(1, path.encode("utf-8")) + _field(2, blob_digest))
    return out


_SHA256_RE = re.compile(rb"[0-9a-f]{64}")


def decode_action_result(data: bytes) -> dict[str, tuple[str, int]]:
    """Path -> (sha256, size) of an ActionResult's output files; ValueError if it is not one."""
    files = {}
    for number, value in _fields(data):
        if number != 2 or not isinstance(value, bytes):
            continue
        output = dict(_fields(value))
        digest = dict(_fields(output.get(2, b"")))
        path, sha, size = output.get(1), digest.get(1), digest.get(2, 0)
        if not isinstance(path, bytes) or not isinstance(sha, bytes) or not isinstance(size, int):
            raise ValueError("an output file without a path or a digest")
        if not _SHA256_RE.fullmatch(sha):       # it names a URL: /cas/../../etc/passwd
            raise ValueError("an output file's digest is not a SHA-256 (64 hex digits)")
        files[path.decode("utf-8")] = (sha.decode("ascii"), size)
    return files


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value) if value else b""


def _fields(data: bytes) -> Iterable[tuple[int, bytes | int]]:
    """(field number, value) of a protobuf message: varints as int, length-delimited as bytes."""
    at = 0

    def varint() -> int:
        nonlocal at
        value, shift = 0, 0
        while True:
            if at >= len(data) or shift > 63:
                raise ValueError("a truncated varint")
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    while at < len(data):
        tag = varint()
        number, kind = tag >> 3, tag & 7
        if kind == 0:
            yield number, varint()
        elif kind == 2:
            size = varint()
            if at + size > len(data):
                raise ValueError("a truncated field")
            yield number, data[at:at + size]
            at += size
        elif kind in (1, 5):
            at += 8 if kind == 1 else 4
        else:
            raise ValueError(f"wire type {kind}")
