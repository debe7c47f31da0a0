"""Wrapper hal.executables: a hand-written kernel with the launch shape its author chose.

Object substitution keeps IREE's workgroup count and size. A wrapped
substitution instead source-substitutes a generated ``hal.executable`` with the
replaced executable's name, variant target, export name and layout (read from
the dump), an ``objects([...])`` variant linking the kernel, and the manifest's
workgroup count (and size, on GPUs); IREE's codegen is skipped for it. On
llvm-cpu the export calls a C function as a bare-pointer static import:

    void fn(void *binding0, ..., uint32_t constant0, ...,
            size_t workgroup_id_x, _y, _z, size_t workgroup_count_x, _y, _z);

This module renders the wrapper; it compiles nothing.
"""
from __future__ import annotations

from iree_kernels.ir.executables import Executable
from iree_kernels.core.render import render
from iree_kernels.ir.workgroups import count_region


def c_signature(executable: Executable) -> tuple[str, str]:
    """(MLIR argument types, MLIR call operands) of the C function's ABI."""
    layout = executable.export.layout
    types = ["memref<i8>"] * len(layout.bindings) + ["i32"] * layout.constants + ["index"] * 6
    operands = ([f"%binding{b.index}" for b in layout.bindings]
                + [f"%constant{i}" for i in range(layout.constants)]
                + [f"%id{axis}" for axis in range(3)] + [f"%count{axis}" for axis in range(3)])
    return ", ".join(types), ", ".join(operands)


# IREE 3.13 prints an export's workgroup_size as a property, <workgroup_size = [...]>, and
# refuses it in the attribute dictionary, where IREE 3.12 wants it.
PROPERTIES_SINCE = (3, 13)


def render_wrapper(executable: Executable, object_path: str, workgroup_count: list,
                   workgroup_size: list[int] | None, function: str | None,
                   manifest: str = "", entry: str = "",
                   iree_release: tuple[int, int] | None = None,
                   workgroup_local_memory: int = 0) -> str:
    """The wrapper's MLIR for the IREE release given (default: the newest); raises
    workgroups.ExpressionError for a bad count. ``workgroup_local_memory``: the bytes of
    dynamic shared memory a GPU kernel is launched with (what its compiler says)."""
    export = executable.export
    count = count_region(workgroup_count, export.workload)
    signature, arguments = c_signature(executable) if function else ("", "")
    size = list(workgroup_size or []) + [1] * (3 - len(workgroup_size or []))
    return render("wrapper.mlir.j2", executable=executable, export=export, object=object_path,
                  count=count, workgroup_size=size if workgroup_size else None,
                  function=function, signature=signature, arguments=arguments,
                  manifest=manifest, entry=entry, local_memory=workgroup_local_memory,
                  size_as_property=tuple(iree_release or PROPERTIES_SINCE) >= PROPERTIES_SINCE)
