"""CUDA kernels (``.cu``, compiled to PTX by the ptx tool) and PTX kernels (``.ptx``): target cuda.

Object mode (replacing IREE's binary) or wrapped; a PTX kernel is checked by
``kernel_checks.check_ptx`` (ptxas, for CUDA_ARCH). Not for the compile itself
(``site_tools/ptx.py``) nor for reading PTX (``binaries.ptx_text``).
"""
from __future__ import annotations

from iree_kernels.binaries import kernel_checks
from iree_kernels.ir.targets import PTX_ISA_VERSION, TARGETS
from iree_kernels.kinds.base import GPU_MODES, GPU_WHY, KernelKind, Scaffold

_COMMENT = "a CUDA or PTX kernel: target cuda, object or wrapped mode"
KINDS = (
    KernelKind(".cu", "a CUDA kernel", ("cuda",), "object", GPU_MODES, GPU_WHY, ".ptx",
               tool="ptx", short_lines=(("PTXCOMSTR", "PTX      $SOURCE"),), family=True,
               scaffold=Scaffold("cuda", ("cuda",), "scaffold/kernel.cu.j2", "object",
                                 default_for=("cuda",),
                                 constant_array=("__device__ const {type} {name}[{count}] = {{", "};", "f")),
               schema_comment=_COMMENT,
               doc="compiles it to PTX (nvcc or clang), checks the PTX, substitutes it"),
    KernelKind(".ptx", "a PTX kernel", ("cuda",), "object", GPU_MODES, GPU_WHY,
               checker="ptxas", check=kernel_checks.check_ptx,
               check_settings=(("CUDA_ARCH", TARGETS["cuda"].default_arch),
                               ("PTX_ISA_VERSION", PTX_ISA_VERSION)),
               schema_comment=_COMMENT,
               doc="checks it, substitutes it"),
)
