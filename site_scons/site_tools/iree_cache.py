"""SCons tool: a build cache shared between checkouts and machines, whose entries are checked when taken.

It is SCons's own CacheDir: every built file is stored under its build
signature (the contents of everything it depends on, its command line, its
repo-relative path), so any checkout with the same inputs and tools takes it
instead of building it. This tool keeps the entries in ``iree_kernels.cache.store``,
as the codegen cache does: beside each entry, ``<entry>.sha256`` is its digest
record, signed where a key is configured, and an entry is used only if it is
a regular file (a link is never followed), its record can be believed (with a
key: signed with it), and the copy taken from it has the recorded content. An
entry failing any of these counts as a miss with one warning: the file is
built, never shipped, and the entry is removed unless the cache is read-only.
Entries get the umask's permissions. Targets declared AlwaysBuild
(measurements, reports) are neither stored nor taken: SCons would otherwise
hand back the last run's result instead of running them.

Method:
  env.IreeCacheDir()   configures the signing key (both caches), and turns the
                       cache on for ``env`` when CACHE_DIR names a folder

Variables (declared in iree_kernels.settings):
  CACHE_DIR             the cache folder; default $IREE_KERNELS_CACHE_DIR; empty: no cache
  CACHE_READONLY        take entries, never write or remove any (as --cache-readonly does)
  CACHE_REQUIRE_SIGNED  fail unless a signing key is configured (a key always
                        makes unsigned entries refused)
  REMOTE_CACHE_*        a remote cache behind this one (iree_kernels.scons.caches)
Environment: IREE_KERNELS_CACHE_KEY (the key) or IREE_KERNELS_CACHE_KEY_FILE
(a file holding it); read once, then removed from the environment of the
tools the build runs.

Not for: deciding what is up to date (SCons's signatures do), or pruning old
entries (delete the least recently used files of the folder; a build that
may write the cache touches an entry when it takes it).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import SCons.Action
import SCons.CacheDir
import SCons.Script

from iree_kernels.cache import integrity, remote_cache
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import NotRegularFile, is_regular
from iree_kernels.scons import caches
from iree_kernels.scons.reporting import fail
from iree_kernels.cache.store import Entry, Refused, Store

REMOTE_NAMESPACE = "scons"         # names this cache's entries on the remote cache


def _retrieve(target, source, env, say: bool = True) -> int:
    """SCons's CacheRetrieve, taking only a regular file whose copy has its recorded content.

    "Retrieved ..." is said once the file is taken, not before it is checked.
    """
    node = target[0]
    cache = env.get_CacheDir()
    cache.requests += 1
    entry = cache.entry(node)
    path = entry.paths[0]
    if SCons.Action.execute_actions:
        store = cache.store
        if not os.path.lexists(path):
            store.fetch(entry, str(node))
        if not os.path.lexists(path):
            return 1
        try:
            store.copy(entry, entry.name, node.get_abspath())
        except Refused as e:
            return cache.refuse(node, entry, str(e))
    elif not is_regular(path):
        return 1
    cache.hits += 1
    if say and SCons.Action.print_actions:
        line = f"Retrieved `{node.get_internal_path()}' from cache"
        show = env.get("PRINT_CMD_LINE_FUNC")
        if show:
            show(line, target, source, env)
        else:
            print(line)
    return 0


_Retrieve = SCons.Action.Action(_retrieve, None)
_RetrieveSilent = SCons.Action.Action(lambda target, source, env: _retrieve(target, source, env,
                                                                            say=False), None)


class CheckedCacheDir(SCons.CacheDir.CacheDir):
    """SCons's CacheDir whose entries are kept in a ``store.Store``: recorded (signed) when written, checked when taken."""
    readonly = False
    mirror = False              # the folder is the build's own copy of the remote cache
    remote: remote_cache.RemoteCache | None = None     # the server behind the folder

    @property
    def store(self) -> Store:
        return Store(self.is_readonly(), integrity.configured(), self.remote,
                     REMOTE_NAMESPACE, mirror=self.mirror)

    def entry(self, node) -> Entry:
        folder, path = self.cachepath(node)
        name = os.path.basename(path)
        return Entry(Path(folder), name, (name,))

    def is_readonly(self) -> bool:
        return self.readonly or super().is_readonly()

    def _readconfig(self, path: str) -> None:
        if not self.readonly:
            return super()._readconfig(path)
        # SCons takes a lock file even to read the config, which a reader
        # without write access cannot; a reader also never creates the cache.
        try:
            with open(os.path.join(path, "config"), encoding="utf-8") as f:
                self.config = json.load(f)
        except (OSError, ValueError):
            self.config = {"prefix_len": SCons.CacheDir.CACHE_PREFIX_LEN}

    def push(self, node):
        if self.is_readonly() or not self.is_enabled() or node.always_build:
            return None
        entry, store = self.entry(node), self.store
        if is_regular(entry.paths[0]):
            try:
                store.recorded(entry)
                store.upload(entry)    # stored by another build meanwhile
                return None
            except Refused:
                pass
        # Otherwise stored anew: an unsigned entry (refused with a key) or a
        # link is replaced, also where this build took the other targets of its step.
        try:
            store.publish(entry, {entry.name: node.get_abspath()})
        except NotRegularFile:
            return None                # a link the build made is not stored
        except OSError as e:
            self._warn(f"cannot store {node} in the cache {self.path}: {e.strerror}")
        return None

    def retrieve(self, node) -> bool:
        if not self.is_enabled() or node.always_build:
            return False
        env = node.get_build_env()
        if SCons.CacheDir.cache_show:
            if _RetrieveSilent(node, [], env, execute=1) == 0:
                node.build(presub=0, execute=0)
                return True
            return False
        return _Retrieve(node, [], env, execute=1) == 0

    def get_cachedir_csig(self, node) -> str:
        """As SCons's (for -n, where the file is not taken), never reading through a link."""
        _, path = self.cachepath(node)
        return super().get_cachedir_csig(node) if is_regular(path) else node.get_csig()

    def refuse(self, node, entry: Entry, problem: str) -> int:
        """Count a bad entry as a miss, and take it out of the cache where allowed."""
        action = self.store.discard(entry)
        self._warn(f"cache entry {entry.paths[0]} for {node} is not used: {problem}; "
                   f"entry {action}, building the file instead")
        return 1

    @staticmethod
    def _warn(message: str) -> None:
        sys.stderr.write(f"scons: warning: {message}\n")


class ReadOnlyCheckedCacheDir(CheckedCacheDir):
    readonly = True


def use_cache(env) -> None:
    _configure_trust(env)
    path, readonly = caches.shared_cache(env)
    remote = caches.configure(env)
    cache_class = ReadOnlyCheckedCacheDir if readonly else CheckedCacheDir
    if remote is not None:
        mirror = path is None
        cache_class = type("RemoteMirror" if mirror else cache_class.__name__, (cache_class,),
                           {"mirror": mirror, "remote": remote})
        path = caches.mirror(env, path, readonly)
    if path is None:
        return
    # SCons would create it private to this user (mkdtemp); a shared cache
    # gets the permissions the umask gives.
    try:
        Store(readonly).create(path)
    except OSError as e:
        fail(f"CACHE_DIR: cannot create {path}: {e.strerror}")
    env.CacheDir(path, cache_class)


def _configure_trust(env) -> None:
    """Set the key both caches sign and verify with; take it out of the tools' environment."""
    try:
        trust = integrity.from_environment(os.environ, env["CACHE_REQUIRE_SIGNED"])
    except UserError as e:
        fail(str(e))
    os.environ.pop(integrity.KEY_VARIABLE, None)
    integrity.configure(trust)


def generate(env):
    env.AddMethod(use_cache, "IreeCacheDir")


def exists(env):
    return True
