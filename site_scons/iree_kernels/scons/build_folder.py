"""The build folder around a build: locked while scons runs, leftovers removed, ``scons -c`` removing it whole.

Not for: the lock itself (``lock``), what goes in the folder (the tools).
"""
from __future__ import annotations

import atexit
import os
from pathlib import Path

import SCons.Script

from iree_kernels.core import toolchains
from iree_kernels.core.files import remove_leftovers
from iree_kernels.core.tool_versions import FILE as VERSIONS_FILE, VersionRecord
from iree_kernels.scons.lock import lock_build_folder


def lock(env, build) -> None:
    """One scons at a time in a checkout; a look (-n, --question, -h) at an unbuilt one locks nothing."""
    looking = any(SCons.Script.GetOption(o) for o in ("no_exec", "question", "help"))
    if looking and not build.exists():
        return
    lock_build_folder(build.abspath, toolchains.seconds(env["LOCK_WAIT"]) or 0)
    toolchains.keep_versions(VersionRecord(Path(build.abspath, VERSIONS_FILE), not looking))
    if not looking:
        remove_leftovers(build.abspath)


def declare_clean(env, build, root: Path) -> None:
    """``scons -c``: the build folder goes whole (dumps, work folders, the codegen cache in it,
    the lock); cleaning named targets leaves no empty folder behind."""
    SCons.Script.Default(build)
    folder = Path(build.get_abspath())
    if not folder.is_relative_to(root) or folder == root:
        return                          # BUILD_DIR outside the repository: only what was built
    env.Clean(build, build)
    if not SCons.Script.GetOption("no_exec"):
        atexit.register(remove_empty_folders, folder)


def remove_empty_folders(folder: Path) -> None:
    for parent, _, _ in os.walk(folder, topdown=False):
        if parent != str(folder) and not os.listdir(parent):
            try:
                os.rmdir(parent)
            except OSError:             # not ours to remove: left as it is
                pass
