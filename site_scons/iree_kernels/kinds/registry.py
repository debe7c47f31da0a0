"""The table of kernel kinds: every language's kinds, by suffix, in the order they were registered.

A language's kinds are its module's ``KINDS`` (``mlir``, ``cuda``, ``glsl``,
``hip``, ``c``, ``triton``); another repo adds its own with ``register_kind``
(``iree_kernels.register_kind``) before it declares its project. Not for what a
kind is (``base``) nor for the targets (``iree_kernels.ir.targets``).
"""
from __future__ import annotations

from iree_kernels.kinds import c, cuda, glsl, hip, mlir, triton
from iree_kernels.kinds.base import MODES, KernelKind

__all__ = ["KERNEL_KINDS", "MODES", "KernelKind", "kernel_kind", "register_kind"]

KERNEL_KINDS: dict[str, KernelKind] = {}


def register_kind(kind: KernelKind) -> KernelKind:
    """Add ``kind`` to the table (replacing one of its suffix); returns it."""
    KERNEL_KINDS[kind.suffix] = kind
    return kind


for _language in (mlir, cuda, glsl, hip, c, triton):
    for _kind in _language.KINDS:
        register_kind(_kind)


def kernel_kind(path: str) -> KernelKind | None:
    return KERNEL_KINDS.get(_suffix(path))


def kind_fields() -> dict[str, KernelKind]:
    """Every kind's own manifest field -> the kind that takes it (the first, in table order)."""
    found: dict[str, KernelKind] = {}
    for kind in KERNEL_KINDS.values():
        for own in kind.fields:
            found.setdefault(own.name, kind)
    return found


def _suffix(path: str) -> str:
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""
