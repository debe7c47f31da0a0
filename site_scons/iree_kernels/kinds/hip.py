"""HIP kernels (``.hip``, compiled to code objects by the hsaco tool) and AMD GPU code objects
(``.hsaco``): target hip.

Object mode or wrapped; a code object is checked by ``kernel_checks.check_hsaco``
(its architecture is HIP_ARCH). Not for the compile (``site_tools/hsaco.py``)
nor for reading code objects (``binaries.code_object``).
"""
from __future__ import annotations

from iree_kernels.binaries import kernel_checks
from iree_kernels.ir.targets import TARGETS
from iree_kernels.kinds.base import GPU_MODES, GPU_WHY, KernelKind

_COMMENT = "a HIP kernel or AMD GPU code object: target hip, object or wrapped mode"
KINDS = (
    KernelKind(".hip", "a HIP kernel", ("hip",), "object", GPU_MODES, GPU_WHY, ".hsaco",
               tool="hsaco", short_lines=(("HSACOCOMSTR", "HSACO    $TARGET"),),
               schema_comment=_COMMENT,
               doc="compiles it to an AMD GPU code object (`.hsaco`, clang-19), "
                   "substitutes it"),
    KernelKind(".hsaco", "an AMD GPU code object", ("hip",), "object", GPU_MODES, GPU_WHY,
               check=kernel_checks.check_hsaco,
               check_settings=(("HIP_ARCH", TARGETS["hip"].default_arch),),
               schema_comment=_COMMENT,
               doc="substitutes it"),
)
