"""GLSL compute shaders (``.glsl``, ``.comp``, compiled to SPIR-V by the glsl tool) and SPIR-V
shaders (``.spv``): target vulkan.

Object mode or wrapped; a compiled shader's entry point ``main`` is renamed to
the export; SPIR-V is checked by ``kernel_checks.check_spirv`` (spirv-val). Not
for the compile (``site_tools/glsl.py``) nor for reading SPIR-V (``binaries.spirv``).
"""
from __future__ import annotations

from iree_kernels.binaries import kernel_checks, spirv
from iree_kernels.kinds.base import GPU_MODES, GPU_WHY, KernelKind, Scaffold

_COMMENT = "a GLSL or SPIR-V shader: target vulkan, object or wrapped mode"
KINDS = (
    KernelKind(".glsl", "a GLSL compute shader", ("vulkan",), "object", GPU_MODES, GPU_WHY,
               ".spv", tool="glsl", entry_point_main=True, short_lines=(("SPIRVCOMSTR", "SPIRV    $SOURCE"),),
               scaffold=Scaffold("glsl", ("vulkan",), "scaffold/kernel.glsl.j2", "object",
                                 default_for=("vulkan",),
                                 constant_array=("const {type} {name}[{count}] = {type}[{count}](", ");", "")),
               schema_comment=_COMMENT,
               doc="compiles it to SPIR-V, names its entry point after the export, checks "
                   "it, substitutes it"),
    KernelKind(".comp", "a GLSL compute shader", ("vulkan",), "object", GPU_MODES, GPU_WHY,
               ".spv", tool="glsl", entry_point_main=True, short_lines=(("SPIRVCOMSTR", "SPIRV    $SOURCE"),),
               schema_comment=_COMMENT,
               doc="compiles it to SPIR-V, names its entry point after the export, checks "
                   "it, substitutes it"),
    KernelKind(".spv", "a SPIR-V shader", ("vulkan",), "object", GPU_MODES, GPU_WHY,
               checker="spirv-val", check=kernel_checks.check_spirv,
               check_settings=(("GLSL_TARGET_ENV", spirv.TARGET_ENV),),
               schema_comment=_COMMENT,
               doc="checks it, substitutes it"),
)
