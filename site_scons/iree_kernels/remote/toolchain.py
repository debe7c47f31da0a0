"""Which tools a step may run elsewhere, and how a tool is known: the digest of its bytes.

A program's identity is the SHA-256 of its file and of the shared libraries beside it
(iree-compile is a small binary loading libIREECompiler.so from its folder), so two machines
run a step alike only where they have the same bytes. A worker advertises each tool it has
as a Dask resource named by that identity; a step asks for the resource of its own tool.
Not for: the versions that go into SCons's signatures (``core.tool_versions``).
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from iree_kernels.core.files import CHUNK

# The tools whose steps may run on a worker. A kernel compiler's depfile names the headers it
# read: those in the project by the paths it was given (relative), its own by the worker's
# paths, which the build drops where they are not here (as a header deleted since).
REMOTE_TOOLS = ("iree-compile", "iree-run-module", "iree-benchmark-module", "nvcc", "clang",
                "glslangValidator", "glslc")


def tool_files(program: str) -> list[Path]:
    """The files that make ``program`` (a path): itself and the shared libraries beside it."""
    real = Path(os.path.realpath(program))
    return [real, *sorted(p for p in real.parent.glob("lib*.so*") if p.is_file())]


def identity(program: str) -> str:
    """The SHA-256 of ``program``'s files, in order, each with its name and size."""
    total = hashlib.sha256()
    for path in tool_files(program):
        total.update(f"{path.name}\0{path.stat().st_size}\0".encode())
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                total.update(chunk)
    return total.hexdigest()


def resource(tool: str, digest: str) -> str:
    """The Dask resource a worker holding ``tool`` of identity ``digest`` advertises."""
    return f"tool:{tool}:{digest[:24]}"


def device_resource(driver: str) -> str:
    """The Dask resource of a worker with devices of the IREE runtime's ``driver``."""
    return f"device:{driver}"


def short(digest: str) -> str:
    return f"sha256 {digest[:12]}"
