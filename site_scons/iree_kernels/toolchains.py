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

from .errors import UserError


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
    """$IREE_COMPILE, else the native binary of the installed iree-base-compiler."""
    given = os.environ.get("IREE_COMPILE")
    return given or _native("iree.compiler", "_mlir_libs", "iree-compile")


# Environment variables that name a program outright (and, if it is missing, make it missing).
OVERRIDES = {"nvcc": "NVCC", "clang": "CLANG", "glslangValidator": "GLSLANG", "glslc": "GLSLC",
             "spirv-val": "SPIRV_VAL"}
# How to get each program on Debian 12, for error messages.
INSTALL = {
    "nvcc": "./setup.sh installs the nvidia-cuda-nvcc wheel where no nvcc is on PATH; "
            "or set NVCC=/path/to/nvcc",
    "ptxas": "it comes with nvcc (./setup.sh)",
    "clang": "apt-get install clang (./setup.sh does)",
    "glslangValidator": "apt-get install glslang-tools (./setup.sh does)",
    "glslc": "apt-get install glslc (./setup.sh does)",
    "spirv-val": "apt-get install spirv-tools (./setup.sh does)",
}


def _override(name: str) -> tuple[bool, str | None]:
    variable = OVERRIDES.get(name)
    if variable and os.environ.get(variable):
        path = os.environ[variable]
        return True, path if Path(path).is_file() else shutil.which(path)
    return False, None


def nvcc() -> str | None:
    """$NVCC, else nvcc on PATH, else the CUDA toolkit's, else the registry wheel's."""
    given, path = _override("nvcc")
    if given:
        return path
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
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
    """A program found on PATH (clang, glslangValidator, glslc, spirv-val, ...), or as
    its environment variable says (CLANG, GLSLANG, GLSLC, SPIRV_VAL)."""
    given, path = _override(name)
    return path if given else shutil.which(name)


def run(argv: list[str], file: str | None = None, doing: str = "") -> str:
    """Run a tool; its standard output, or a UserError holding what it printed."""
    result = subprocess.run(argv, capture_output=True, text=True)
    if result.returncode != 0:
        what = f" to {doing}" if doing else ""
        raise UserError(f"{Path(argv[0]).name} failed{what}:\n"
                        f"{(result.stdout + result.stderr).strip()}", file=file)
    return result.stdout


def missing_message(name: str) -> str:
    return f"{name} is not installed: {INSTALL.get(name, 'install it')}"


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
