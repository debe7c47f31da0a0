"""SCons tool: a build cache shared between checkouts and machines, whose entries are checked when taken.

It is SCons's own CacheDir: every built file is stored under its build
signature (the contents of everything it depends on, its command line, its
repo-relative path), so any checkout with the same inputs and tools takes it
instead of building it. This tool adds a check: beside each entry it writes,
``<entry>.sha256`` records the entry's content, and an entry is used only if
it and the copy taken from it still have that content. A corrupted, truncated
or unrecorded entry counts as a miss: the file is built, never shipped, and
the entry is removed unless the cache is read-only. Targets declared
AlwaysBuild (measurements, reports) are neither stored nor taken: SCons would
otherwise hand back the last run's result instead of running them.

Method:
  env.IreeCacheDir()   turns the cache on for ``env`` when CACHE_DIR names a folder

Variables:
  CACHE_DIR        the cache folder; default $IREE_KERNELS_CACHE_DIR; empty: no cache
  CACHE_READONLY   take entries, never write or remove any (as --cache-readonly does)

Not for: deciding what is up to date (SCons's signatures do), or pruning old
entries (delete the least recently used files of the folder; SCons touches an
entry when it takes it).
"""
from __future__ import annotations

import json
import os
import sys

import SCons.Action
import SCons.CacheDir
import SCons.Script
from SCons.Script import BoolVariable

from iree_kernels.files import write_atomically
from iree_kernels.release import sha256_file
from iree_kernels_scons import shared_cache

DIGEST_SUFFIX = ".sha256"
DIGEST_MODE = 0o644


def recorded_digest(entry: str) -> tuple[str, str | None]:
    """The SHA-256 recorded beside a cache entry, and why it cannot be trusted (None: it can)."""
    try:
        with open(entry + DIGEST_SUFFIX, encoding="ascii") as f:
            recorded = f.read().strip()
    except FileNotFoundError:
        return "", "no SHA-256 is recorded beside it"
    except (OSError, UnicodeDecodeError) as e:
        return "", f"its recorded SHA-256 is unreadable ({e})"
    return recorded, content_problem(entry, recorded)


def content_problem(path: str, recorded: str) -> str | None:
    """Why the file at ``path`` does not hold the content whose SHA-256 is ``recorded``."""
    try:
        actual = sha256_file(path)
    except OSError as e:
        return f"it cannot be read ({e.strerror})"
    if actual != recorded:
        return f"its content has SHA-256 {actual[:12]}..., not the recorded {recorded[:12]}..."
    return None


def _write_digest(path: str, digest: str) -> None:
    """Write the digest file whole and readable by every user of the cache."""
    write_atomically(path, digest + "\n", mode=DIGEST_MODE)


def _remove(path: str) -> bool:
    try:
        os.remove(path)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    return True


class CheckedCacheDir(SCons.CacheDir.CacheDir):
    """SCons's CacheDir, recording each entry's SHA-256 when writing it and checking it when taking it."""
    readonly = False

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
        source = node.get_abspath()
        if not os.path.exists(entry) and not os.path.islink(source):
            try:
                _write_digest(entry + DIGEST_SUFFIX, sha256_file(source))
            except OSError as e:
                self._warn(f"cannot record {node} in the cache {self.path}: {e.strerror}")
                return None
        return super().push(node)

    def retrieve(self, node) -> bool:
        if not self.is_enabled() or node.always_build:
            return False
        _, entry = self.cachepath(node)
        if (not SCons.Action.execute_actions or os.path.islink(entry)
                or not os.path.exists(entry)):
            return super().retrieve(node)
        recorded, problem = recorded_digest(entry)
        if problem:
            return self._refuse(node, entry, problem)
        if not super().retrieve(node):
            return False
        problem = content_problem(node.get_abspath(), recorded)
        if problem:
            _remove(node.get_abspath())
            return self._refuse(node, entry, f"the copy taken from it: {problem}")
        return True

    def _refuse(self, node, entry: str, problem: str) -> bool:
        """Count a bad entry as a miss, and take it out of the cache where allowed."""
        action = "kept (read-only cache)"
        if not self.is_readonly():
            removed = _remove(entry) and _remove(entry + DIGEST_SUFFIX)
            action = "removed" if removed else "could not be removed"
        self._warn(f"cache entry {entry} for {node} is not used: {problem}; entry {action}, "
                   "building the file instead")
        return False

    @staticmethod
    def _warn(message: str) -> None:
        sys.stderr.write(f"scons: warning: {message}\n")


class ReadOnlyCheckedCacheDir(CheckedCacheDir):
    readonly = True


def use_cache(env) -> None:
    path, readonly = shared_cache(env)
    if path is None:
        return
    if not readonly:
        # SCons would create it private to this user (mkdtemp); a shared cache
        # gets the permissions the umask gives.
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as e:
            print(f"scons: *** CACHE_DIR: cannot create {path}: {e.strerror}")
            SCons.Script.Exit(2)
    env.CacheDir(path, ReadOnlyCheckedCacheDir if readonly else CheckedCacheDir)


def generate(env):
    env.Append(IREE_VARIABLES=[
        ("CACHE_DIR", "build cache folder shared between checkouts (environment: "
         "IREE_KERNELS_CACHE_DIR); empty: no cache", os.environ.get("IREE_KERNELS_CACHE_DIR", "")),
        BoolVariable("CACHE_READONLY", "take files from the cache but never write to it",
                     False),
    ])
    env.AddMethod(use_cache, "IreeCacheDir")


def exists(env):
    return True
