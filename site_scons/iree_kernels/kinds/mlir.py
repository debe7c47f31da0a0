"""MLIR kernels: a ``hal.executable`` source (``.mlir``) replacing an executable's source.

Any target; source mode only. It may link files (``#hal.executable.object``),
checked when the manifest is read. Its skeleton is the executable's dumped source.
Not for IREE's own MLIR (``iree_kernels.ir``).
"""
from __future__ import annotations

from iree_kernels.ir.targets import TARGETS
from iree_kernels.kinds.base import KernelKind, Scaffold

KINDS = (
    KernelKind(".mlir", "an MLIR hal.executable source", tuple(TARGETS), "source", ("source",),
               "an .mlir file replaces an executable's source; object and wrapped modes "
               "take a kernel (.ptx, .spv, .c, ...)", links_objects=True,
               scaffold=Scaffold("mlir", None, None, "source"),
               schema_comment="an MLIR hal.executable source: source mode, any target",
               doc="substitutes it as is"),
)
