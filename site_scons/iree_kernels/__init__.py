"""Bring hand-written kernels into IREE programs.

The plain-Python half of the project: reading kernel manifests, inspecting a
model's executables, validating substitutions against them and rendering the
files iree-compile reads. It imports without SCons; the SCons tools live in
``site_scons/site_tools`` (``iree_kernels.site_tools`` in the wheel) and their
shared glue in the subpackage ``iree_kernels.scons``, the one part that imports SCons.
"""

import hashlib
from functools import lru_cache
from pathlib import Path


def tool_path() -> str:
    """The folder of this project's SCons tools, for ``Environment(toolpath=[...])``.

    A consumer repo's SConstruct, after ``pip install`` of this project (README.md):

        import iree_kernels
        Environment(tools=["iree_project"], toolpath=[iree_kernels.tool_path()]).IreeKernelProject()
    """
    beside = Path(__file__).parent.parent / "site_tools"     # this repo's site_scons
    if (beside / "iree_project.py").is_file():
        return str(beside)
    return str(Path(__file__).parent / "site_tools")         # installed with pip


def include_path() -> str:
    """The folder of the headers shipped with the package: ``#include "iree_kernels/grid.cuh"``.

    The ptx and glsl tools search it after CUDA_CPPPATH and GLSL_CPPPATH.
    """
    return str(Path(__file__).parent / "data" / "include")


@lru_cache(maxsize=None)
def fingerprint() -> str:
    """A hash of this package's code and templates: what it renders changes with it."""
    digest = hashlib.sha256()
    root = Path(__file__).parent
    for path in sorted(root.rglob("*")):
        if path.suffix in (".py", ".j2", ".h") and "__pycache__" not in path.parts:
            digest.update(path.relative_to(root).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
