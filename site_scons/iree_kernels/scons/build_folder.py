"""The build folder around a build: claimed and locked while scons runs, leftovers removed, ``scons -c``
removing what a build wrote there.

Not for: the lock itself (``lock``), what goes in the folder (the tools).
"""
from __future__ import annotations

import atexit
import os
from pathlib import Path

import SCons.SConsign
import SCons.Script

from iree_kernels.core import toolchains
from iree_kernels.core.files import remove_leftovers
from iree_kernels.core.stat_memo import FILE as MEMO_FILE, StatMemo, computed_each_time
from iree_kernels.core.tool_versions import FILE as VERSIONS_FILE, VersionRecord
from iree_kernels.scons.lock import (MARKER, claim_build_folder, lock_build_folder,
                                     written_by_a_build)


def lock(env, build) -> None:
    """One scons at a time in a checkout. A look (-n, --question) shares the lock with other
    looks, and in a checkout it cannot write (read-only) takes none; -h reads no build
    folder, and a look at an unbuilt one locks nothing."""
    looking = any(SCons.Script.GetOption(o) for o in ("no_exec", "question", "help"))
    if SCons.Script.GetOption("question"):
        # --question builds nothing, so it records nothing (SCons writes .sconsign after it
        # as after a build; -n does not): a read-only checkout answers it.
        SCons.SConsign.write = lambda: None
    env["IREE_FILE_MEMO"] = computed_each_time()
    if looking and not build.exists() or SCons.Script.GetOption("help"):
        return
    claim_build_folder(build.abspath, env["BUILD_DIR"], write=not looking)
    lock_build_folder(build.abspath, toolchains.seconds(env["LOCK_WAIT"]) or 0,
                      shared=looking)
    toolchains.keep_versions(VersionRecord(Path(build.abspath, VERSIONS_FILE), not looking))
    env["IREE_FILE_MEMO"] = StatMemo(Path(build.abspath, MEMO_FILE), not looking)
    if not looking:
        remove_leftovers(build.abspath)


def file_memo(env) -> StatMemo:
    """What the build keeps of values computed from files (``lock`` made it)."""
    return env.get("IREE_FILE_MEMO") or computed_each_time()


def declare_clean(env, build, root: Path) -> None:
    """``scons -c``: what a build writes at the top of the build folder goes whole (dumps, work
    folders, the codegen cache in it, the lock), where the folder bears the build's marker;
    anything else in it stays. Cleaning named targets leaves no empty folder behind."""
    SCons.Script.Default(build)
    folder = Path(build.get_abspath())
    if not folder.is_relative_to(root) or folder == root or not (folder / MARKER).is_file():
        return                          # not a folder the build made: only what was built
    entries = sorted(os.listdir(folder))
    written = [name for name in entries if written_by_a_build(name)]
    env.Clean(build, build if written == entries else [build.Entry(name) for name in written])
    if not SCons.Script.GetOption("no_exec"):
        atexit.register(remove_empty_folders, folder)


def remove_empty_folders(folder: Path) -> None:
    for parent, _, _ in os.walk(folder, topdown=False):
        if parent != str(folder) and not os.listdir(parent):
            try:
                os.rmdir(parent)
            except OSError:             # not ours to remove: left as it is
                pass
