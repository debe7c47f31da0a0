"""Finding the programs the build drives, and asking them their versions.

IREE's wheels put Python wrappers on PATH that cost a Python start-up per call;
the native binaries beside them are used instead. Nothing here builds anything.
"""
from __future__ import annotations

import importlib.util
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path


def _package_dir(package: str) -> Path | None:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _native(package: str, libs: str, program: str) -> str | None:
    root = _package_dir(package)
    if root is not None:
        candidate = root / libs / program
        if candidate.is_file():
            return str(candidate)
    return shutil.which(program)


def iree_compile() -> str | None:
    return _native("iree.compiler", "_mlir_libs", "iree-compile")


def iree_tool(program: str) -> str | None:
    """A runtime tool: iree-run-module, iree-benchmark-module, ..."""
    return _native("iree._runtime_libs", "", program)


@lru_cache(maxsize=None)
def version(program: str, flag: str = "--version") -> str:
    """What a program prints for ``flag``, lines stripped and joined; '' if it cannot run."""
    try:
        result = subprocess.run([program, flag], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    lines = [l.strip() for l in (result.stdout + result.stderr).splitlines() if l.strip()]
    return " ".join(lines)
