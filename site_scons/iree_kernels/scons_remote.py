"""SCons glue of the remote cache (``iree_kernels.remote_cache``): its variables, and both caches' use of it.

SCons's cache: the remote mirrors into a local CacheDir (CACHE_DIR, else
``$BUILD_DIR/remote-cache``). A file not in the local cache is looked up on
the server and, when found, its entry and digest record are written into the
local cache, where ``iree_cache`` checks them (content, signature) exactly as
an entry put there by a local build; a file built is stored locally, then
uploaded. The codegen cache does the same with its folder
(``codegen_cache.plan(fetch=...)``, then ``store_codegen`` after compiling).

Entries are named on the server by ``remote_cache.action_key`` of the local
entry's name (SCons's build signature, the codegen key), which holds no path,
URL or secret, so checkouts anywhere share them.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import SCons.Action
import SCons.Script

from iree_kernels import remote_cache
from iree_kernels.errors import UserError
from iree_kernels.files import read_regular, write_atomically
from iree_kernels.scons import fail

RECORD_SUFFIX = ".sha256"          # the digest record beside an entry, as iree_cache names it
MIRROR = "remote-cache"            # under BUILD_DIR, where no CACHE_DIR is given

def configure(env) -> remote_cache.RemoteCache | None:
    """The remote cache REMOTE_CACHE_URL names (None: none); its token taken out of the tools' environment."""
    url = env.get("REMOTE_CACHE_URL", "")
    if not url or SCons.Script.GetOption("cache_disable"):
        os.environ.pop(remote_cache.TOKEN_VARIABLE, None)
        remote_cache.configure(None)
        return None
    try:
        timeout, retries = float(env["REMOTE_CACHE_TIMEOUT"]), int(env["REMOTE_CACHE_RETRIES"])
    except ValueError:
        fail("REMOTE_CACHE_TIMEOUT and REMOTE_CACHE_RETRIES take numbers (seconds, attempts)")
    read_only = bool(env["REMOTE_CACHE_READONLY"] or SCons.Script.GetOption("cache_readonly"))
    try:
        cache = remote_cache.from_environment(url, read_only, timeout, retries, warn=_warn)
    except UserError as e:
        fail(str(e))
    os.environ.pop(remote_cache.TOKEN_VARIABLE, None)
    remote_cache.configure(cache)
    return cache


def mirror(env, path: str | None, readonly: bool) -> str:
    """The local CacheDir the remote cache's entries are copied into."""
    if path is None:
        return env.Dir(f"#{env['BUILD_DIR']}/{MIRROR}").abspath
    if readonly:
        fail("REMOTE_CACHE_URL copies entries into CACHE_DIR, which CACHE_READONLY keeps "
             "from being written: unset CACHE_DIR (entries then go to "
             f"{env['BUILD_DIR']}/{MIRROR}) or CACHE_READONLY")
    return path


def mirrored(base: type, remote: remote_cache.RemoteCache) -> type:
    """``base`` (a CacheDir class of iree_cache) backed by ``remote``."""
    return type(f"Remote{base.__name__}", (RemoteMirror, base), {"remote": remote})


class RemoteMirror:
    """A CacheDir mixin: a local miss is fetched from the server first; a file stored is uploaded."""
    remote: remote_cache.RemoteCache

    def retrieve(self, node) -> bool:
        if self.is_enabled() and not node.always_build and SCons.Action.execute_actions:
            _, entry = self.cachepath(node)
            if not os.path.lexists(entry):
                self._fetch(node, entry)
        return super().retrieve(node)

    def push(self, node):
        result = super().push(node)
        if self.is_readonly() or not self.is_enabled() or node.always_build:
            return result
        _, entry = self.cachepath(node)
        try:
            files = {os.path.basename(p): read_regular(p) for p in (entry, entry + RECORD_SUFFIX)}
        except OSError:
            return result               # not stored locally: nothing checked to upload
        self.remote.store(_scons_key(entry), files)
        return result

    def _fetch(self, node, entry: str) -> None:
        name = os.path.basename(entry)
        files = self.remote.fetch(_scons_key(entry), [name, name + RECORD_SUFFIX], str(node))
        if files is None:
            return
        try:
            os.makedirs(os.path.dirname(entry), exist_ok=True)
            # The record first: a local reader never finds the entry unrecorded.
            write_atomically(entry + RECORD_SUFFIX, files[name + RECORD_SUFFIX])
            write_atomically(entry, files[name])
        except OSError as e:
            _warn(f"cannot copy the remote cache's entry of {node} into {entry}: {e.strerror}")


def _scons_key(entry: str) -> str:
    return remote_cache.action_key("scons", os.path.basename(entry))


def codegen_fetcher(target: str):
    """What ``codegen_cache.plan`` calls to copy an entry from the server into its folder; None: no server."""
    remote = remote_cache.configured()
    if remote is None:
        return None

    def fetch(entry) -> None:
        wanted = [*entry.used, entry.digests]
        files = remote.fetch(_codegen_key(target, entry.key), [p.name for p in wanted],
                             f"codegen cache entry {entry.key}")
        if files is None:
            return
        entry.folder.mkdir(parents=True, exist_ok=True)
        for path in wanted:             # the digest record last: it marks the entry whole
            write_atomically(path, files[path.name])

    return fetch


def store_codegen(target: str, entries) -> None:
    """Upload the codegen cache entries just compiled (those refused as stand-ins stay local)."""
    remote = remote_cache.configured()
    if remote is None or remote.read_only:
        return
    for entry in entries:
        paths: list[Path] = [*entry.used, entry.digests]
        try:
            files = {p.name: read_regular(p) for p in paths}
        except OSError:
            continue
        remote.store(_codegen_key(target, entry.key), files)


def _codegen_key(target: str, key: str) -> str:
    return remote_cache.action_key(f"codegen {target}", key)


def _warn(message: str) -> None:
    sys.stderr.write(f"scons: warning: {message}\n")
