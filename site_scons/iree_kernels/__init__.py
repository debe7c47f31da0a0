"""Bring hand-written kernels into IREE programs.

The plain-Python half of the project: reading kernel manifests, inspecting a
model's executables, validating substitutions against them and rendering the
files iree-compile reads. It imports without SCons; the SCons tools live in
``site_scons/site_tools`` (``iree_kernels.site_tools`` in the wheel) and their
shared glue in the subpackage ``iree_kernels.scons``, the one part that imports SCons.

What other repos may import is named here (``__all__``): the folders of the tools
and headers, the kernel kinds and how to add one, the one error a user sees, running
a program, and the SCons glue a kind's tool needs. Each is loaded when first asked
for (``__getattr__``), so ``import iree_kernels`` stays as cheap as it was; anything
else is the package's inside and may move.
"""

import hashlib
import importlib
from functools import lru_cache
from pathlib import Path

# The public face beyond this file's own functions: name -> the module that holds it.
_PUBLIC = {
    "KernelKind": "iree_kernels.kinds.base",        # a kernel file of one suffix: data, hooks
    "KindField": "iree_kernels.kinds.base",         # a manifest field of a kind's own
    "Scaffold": "iree_kernels.kinds.base",          # how scons scaffold writes a kind
    "MODES": "iree_kernels.kinds.base",
    "KERNEL_KINDS": "iree_kernels.kinds.registry",
    "register_kind": "iree_kernels.kinds.registry",
    "kernel_kind": "iree_kernels.kinds.registry",
    "UserError": "iree_kernels.core.errors",         # one line naming file, line, entry, field
    "run": "iree_kernels.core.toolchains",           # a program, with its time limit
    "on_path": "iree_kernels.core.toolchains",
    "Timeouts": "iree_kernels.core.toolchains",
    # The SCons glue a kind's tool needs (these import SCons).
    "KernelCompiler": "iree_kernels.scons.kernels",
    "add_kernel_compiler": "iree_kernels.scons.kernels",
    "version_emitter": "iree_kernels.scons.kernels",
    "whole_file_command": "iree_kernels.scons.spawn",
    "reporting_user_errors": "iree_kernels.scons.reporting",
}
__all__ = ["tool_path", "include_path", "fingerprint", *_PUBLIC]


def __getattr__(name: str):
    """A public name, imported from its module when first asked for."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'iree_kernels' has no attribute '{name}'")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})


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
