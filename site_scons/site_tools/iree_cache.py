"""SCons tool: a build cache shared between checkouts and machines, whose entries are checked when taken.

It is SCons's own CacheDir: every built file is stored under its build
signature (the contents of everything it depends on, its command line, its
repo-relative path), so any checkout with the same inputs and tools takes it
instead of building it. This tool adds checks (``iree_kernels.integrity``):
beside each entry it writes, ``<entry>.sha256`` is the entry's digest record,
signed where a key is configured, and an entry is used only if it is a
regular file (a link is never followed), its record can be believed (with a
key: signed with it), and the copy taken from it has the recorded content. An
entry failing any of these counts as a miss with one warning: the file is
built, never shipped, and the entry is removed unless the cache is read-only.
Entries get the umask's permissions. Targets declared AlwaysBuild
(measurements, reports) are neither stored nor taken: SCons would otherwise
hand back the last run's result instead of running them.

Method:
  env.IreeCacheDir()   configures the signing key (both caches), and turns the
                       cache on for ``env`` when CACHE_DIR names a folder

Variables:
  CACHE_DIR             the cache folder; default $IREE_KERNELS_CACHE_DIR; empty: no cache
  CACHE_READONLY        take entries, never write or remove any (as --cache-readonly does)
  CACHE_REQUIRE_SIGNED  fail unless a signing key is configured (a key always
                        makes unsigned entries refused)
  REMOTE_CACHE_*        a remote cache behind this one (iree_kernels.scons_remote)
Environment: IREE_KERNELS_CACHE_KEY (the key) or IREE_KERNELS_CACHE_KEY_FILE
(a file holding it); read once, then removed from the environment of the
tools the build runs.

Not for: deciding what is up to date (SCons's signatures do), or pruning old
entries (delete the least recently used files of the folder; SCons touches an
entry when it takes it).
"""
from __future__ import annotations

import json
import os
import stat
import sys

import SCons.Action
import SCons.CacheDir
import SCons.Script

from iree_kernels import integrity
from iree_kernels.errors import UserError
from iree_kernels.files import NotRegularFile, copy_atomically, read_regular, write_atomically
from iree_kernels.scons import fail, shared_cache
from iree_kernels import scons_remote as remote_glue

DIGEST_SUFFIX = ".sha256"


def recorded_digest(entry: str, trust: integrity.Trust) -> tuple[str, str | None]:
    """The SHA-256 recorded beside a cache entry, and why it cannot be trusted (None: it can)."""
    name = os.path.basename(entry)
    try:
        return trust.check(read_regular(entry + DIGEST_SUFFIX), [name])[name], None
    except FileNotFoundError:
        return "", "no SHA-256 is recorded beside it"
    except NotRegularFile as e:
        return "", f"its digest record {e.strerror}"
    except OSError as e:
        return "", f"its digest record is unreadable ({e.strerror})"
    except integrity.Untrusted as e:
        return "", str(e)


def _remove(path: str) -> bool:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


def _kind(path: str) -> str | None:
    """What is at ``path`` itself: None (nothing), "file", or why it is not an entry."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode):
        return "file"
    return "it is a symbolic link" if stat.S_ISLNK(mode) else "it is not a regular file"


def _retrieve(target, source, env, say: bool = True) -> int:
    """SCons's CacheRetrieve, taking only a regular file whose copy has its recorded content.

    "Retrieved ..." is said once the file is taken, not before it is checked.
    """
    node = target[0]
    cache = env.get_CacheDir()
    cache.requests += 1
    _, entry = cache.cachepath(node)
    kind = _kind(entry)
    if kind is None or (kind != "file" and not SCons.Action.execute_actions):
        return 1
    if SCons.Action.execute_actions:
        problem = _take(cache, node, entry, kind)
        if problem:
            return cache.refuse(node, entry, problem)
    cache.hits += 1
    if say and SCons.Action.print_actions:
        line = f"Retrieved `{node.get_internal_path()}' from cache"
        show = env.get("PRINT_CMD_LINE_FUNC")
        if show:
            show(line, target, source, env)
        else:
            print(line)
    return 0


def _take(cache, node, entry: str, kind: str) -> str | None:
    """Copy the entry to the node's file; why it was not taken (None: it was)."""
    if kind != "file":
        return kind
    recorded, problem = recorded_digest(entry, cache.trust)
    if problem:
        return problem
    try:
        copy_atomically(entry, node.get_abspath(), expected=recorded)
    except NotRegularFile as e:
        return f"it {e.strerror}"
    except ValueError as e:
        return str(e)
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    try:
        os.utime(entry, follow_symlinks=False)
    except OSError:
        pass
    return None


_Retrieve = SCons.Action.Action(_retrieve, None)
_RetrieveSilent = SCons.Action.Action(lambda target, source, env: _retrieve(target, source, env,
                                                                            say=False), None)


class CheckedCacheDir(SCons.CacheDir.CacheDir):
    """SCons's CacheDir, recording each entry's (signed) SHA-256 when writing it, checking both when taking it."""
    readonly = False

    @property
    def trust(self) -> integrity.Trust:
        return integrity.configured()

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
        _, entry = self.cachepath(node)
        if _kind(entry) == "file" and not recorded_digest(entry, self.trust)[1]:
            return None                # stored by another build meanwhile
        # Otherwise stored anew: an unsigned entry (refused with a key) or a
        # link is replaced, also where this build took the other targets of its step.
        name = os.path.basename(entry)

        def record(digest: str) -> None:
            # Before the entry appears: a reader never finds it unrecorded.
            write_atomically(entry + DIGEST_SUFFIX, self.trust.record({name: digest}))

        try:
            copy_atomically(node.get_abspath(), entry, before_rename=record)
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
        _, entry = self.cachepath(node)
        return super().get_cachedir_csig(node) if _kind(entry) == "file" else node.get_csig()

    def refuse(self, node, entry: str, problem: str) -> int:
        """Count a bad entry as a miss, and take it out of the cache where allowed."""
        action = "kept (read-only cache)"
        if not self.is_readonly():
            removed = _remove(entry) and _remove(entry + DIGEST_SUFFIX)
            action = "removed" if removed else "could not be removed"
        self._warn(f"cache entry {entry} for {node} is not used: {problem}; entry {action}, "
                   "building the file instead")
        return 1

    @staticmethod
    def _warn(message: str) -> None:
        sys.stderr.write(f"scons: warning: {message}\n")


class ReadOnlyCheckedCacheDir(CheckedCacheDir):
    readonly = True


def use_cache(env) -> None:
    _configure_trust(env)
    path, readonly = shared_cache(env)
    remote = remote_glue.configure(env)
    if remote is not None:
        path = remote_glue.mirror(env, path, readonly)
    if path is None:
        return
    if not readonly:
        # SCons would create it private to this user (mkdtemp); a shared cache
        # gets the permissions the umask gives.
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            fail(f"CACHE_DIR: cannot create {path}: {e.strerror}")
    kind = ReadOnlyCheckedCacheDir if readonly else CheckedCacheDir
    env.CacheDir(path, remote_glue.mirrored(kind, remote) if remote else kind)


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
