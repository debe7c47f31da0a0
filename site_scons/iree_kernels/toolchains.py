"""Finding the programs the build drives, and asking them their versions.

IREE's wheels put Python wrappers on PATH that cost a Python start-up per call;
the native binaries beside them are used instead. Nothing here builds anything.
"""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from functools import lru_cache
from pathlib import Path


def _package_dir(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:
        return None
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


def nvcc() -> str | None:
    """$NVCC, else nvcc on PATH, else the CUDA toolkit's, else the registry wheel's."""
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).is_file():
            return candidate
    wheel = _package_dir("nvidia")
    if wheel is not None:
        found = sorted(wheel.glob("cu*/bin/nvcc"))
        if found:
            return str(found[-1])
    return None


def ptxas() -> str | None:
    """The ptxas beside the nvcc in use."""
    compiler = nvcc()
    if compiler:
        candidate = Path(compiler).with_name("ptxas")
        if candidate.is_file():
            return str(candidate)
    return shutil.which("ptxas")


def on_path(name: str) -> str | None:
    """A program found on PATH (clang, glslangValidator, glslc, spirv-val, ...)."""
    return shutil.which(name)


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
