"""Paths a user wrote, made safe: repo-relative, inside the repository, outside the build folder.

Every path a manifest names (a model's source, a kernel, a folder of kernels,
an object an MLIR kernel links) goes through ``located`` once: characters SCons
or a flag file would take as syntax, absolute paths, links leading out of the
repository and paths into the build folder are refused with a ValueError
saying why. Not for what the file holds, nor for which fields name paths
(``manifest``, ``substitutions``).
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

from iree_kernels.core.errors import shown
from iree_kernels.core.files import not_regular

# Paths travel through SCons and into flag files; '$', quotes, ';' and the
# like are refused rather than escaped.
PATH_RE = re.compile(r"^[\w .+,@=/-]+$")
# IREE's dump names an executable's source module_<executable>.mlir, and torch and ONNX
# executables main$async_dispatch_3: a file of a folder of kernels may keep that name. Its
# '$' is followed by a letter, digit or '_', never by '{' or '(', and the build never lets
# SCons substitute a kernel's path.
DUMP_NAME_RE = re.compile(r"^\w[\w.-]*(?:\$\w[\w.-]*)+\.mlir$")


def located(root: Path, value: str, build_dir: str = "build", hint: bool = True,
            dump_name: bool = False) -> Path:
    """``root / value`` resolved, where ``value`` is a path a user may write; ValueError if not.

    ``hint``: say how a kernel named after an executable with '$' is named.
    ``dump_name``: the file's name may be one IREE's dump gives (``DUMP_NAME_RE``).
    """
    folder, _, name = value.rpartition("/")
    if dump_name and DUMP_NAME_RE.fullmatch(name) and (not folder or PATH_RE.fullmatch(folder)):
        pass
    elif not PATH_RE.fullmatch(value):
        bad = next((c for c in value if not PATH_RE.fullmatch(c)), value[-1:])
        more = ""
        if bad == "$" and dump_name:
            more = (" (a folder's .mlir kernel may keep IREE's dump name, "
                    "module_main$async_dispatch_3.mlir: no '{' or '(' after a '$')")
        elif bad == "$" and hint:
            more = (" (a kernel named after an executable with '$' is named with '_' for it: "
                    "main_async_dispatch_3.mlir for main$async_dispatch_3)")
        raise ValueError(f"path '{shown(value)}' contains {bad!r}; paths may use "
                         f"letters, digits, spaces and . _ + , @ = / - only{more}")
    if value.startswith("/"):
        raise ValueError(f"'{value}' is absolute; write it relative to the repository root")
    resolved = resolve(root, value)
    if not resolved.is_relative_to(root):
        raise ValueError(f"'{value}' is outside the repository")
    if resolved.is_relative_to(root / build_dir):
        raise ValueError(f"'{value}' is inside the build folder ({build_dir}/), "
                         "which holds what the build makes; keep sources outside it")
    return resolved


def repo_path(root: Path, value: str, build_dir: str = "build",
              suffixes: tuple[str, ...] = (), dump_name: bool = False) -> str:
    """``value``, a path a user wrote, as a repo-relative path to a regular file in the repo.

    ValueError says why not: characters SCons or a flag file would take as
    syntax, absolute, outside the repository (links resolved), inside the
    build folder, a wrong suffix, missing, a folder or FIFO.
    """
    resolved = located(root, value, build_dir, dump_name=dump_name)
    if suffixes and not value.endswith(suffixes):
        raise ValueError(f"'{value}' should end in {one_of(suffixes)}")
    why = not_regular(resolved)
    if why == "not found":
        raise ValueError(f"file not found: {value}")
    if why:
        raise ValueError(f"'{value}' is {why}, not a regular file")
    return resolved.relative_to(root).as_posix()


def repo_folder(root: Path, value: str, build_dir: str = "build") -> str:
    """``value``, a folder a user wrote (no '/' at the end), as a repo-relative path; ValueError
    as ``repo_path``, or for a folder that is not there."""
    resolved = located(root, value, build_dir, hint=False)
    if not resolved.is_dir():
        raise ValueError(f"folder not found: {value}" if not resolved.exists()
                         else f"'{value}' is not a folder (a single kernel goes in 'file')")
    return resolved.relative_to(root).as_posix()


def inside(root: Path, value: str, build_dir: str = "build") -> bool:
    """Whether ``value``, a relative path without odd characters, stays in the repository and
    out of the build folder."""
    try:
        located(root, value, build_dir)
    except ValueError:
        return False
    return True


def one_of(words) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return " or ".join(filter(None, [", ".join(words[:-1]), words[-1]]))


def resolve(root: Path, value: str) -> Path:
    """``root / value`` with symbolic links resolved; each folder is resolved once."""
    parent, name = os.path.split(value)
    path = os.path.join(_resolved_dir(str(root), parent), name)
    return Path(os.path.realpath(path) if os.path.islink(path) or name in ("", ".", "..") else path)


@lru_cache(maxsize=None)
def _resolved_dir(root: str, parent: str) -> str:
    return os.path.realpath(os.path.join(root, parent))
