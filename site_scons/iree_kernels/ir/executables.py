"""What a model's executables are, read from an executable-sources dump.

``iree-compile --compile-to=executable-sources`` writes the program with each
``hal.executable`` still in source form; this module reads it with the MLIR
Python bindings shipped in iree-base-compiler and returns plain records:
names, export names, pipeline layouts. It does not run iree-compile.
"""
from __future__ import annotations

import re
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, TypeVar

from iree_kernels.core.errors import UserError

T = TypeVar("T")


@dataclass(frozen=True)
class Binding:
    index: int
    type: str                 # "storage_buffer"
    read_only: bool
    flags: str = ""           # as the layout spells them: "ReadOnly|Indirect"


@dataclass(frozen=True)
class Layout:
    bindings: tuple[Binding, ...]
    constants: int

    def describe(self) -> str:
        names = ", ".join(f"{b.index}:{'ro' if b.read_only else 'rw'}" for b in self.bindings)
        return f"{len(self.bindings)} bindings [{names}], {self.constants} push constants"


@dataclass(frozen=True)
class Export:
    name: str
    ordinal: int
    layout: Layout
    workgroup_size: tuple[int, ...] | None
    layout_text: str = ""     # the #hal.pipeline.layout attribute as MLIR prints it
    workload: int = 0         # how many workload values the count region takes
    count_text: str = ""      # the count region's ops, as MLIR prints them


@dataclass(frozen=True)
class Subspan:
    """One tensor an executable reads or writes through a binding."""
    binding: int
    offset: int | str         # bytes from the binding's start, or "from push constants 0, 1"
    access: str               # "readonly", "writeonly", "readwrite"
    element: str              # "f32"
    shape: tuple[int | None, ...]   # None: a dynamic dimension
    # Per dynamic dimension, in order: the push constants its size is computed
    # from (a 64-bit size is two: low word, high word) and the workload value
    # it is passed as (w<N>), or None.
    dynamic_dims: tuple[tuple[tuple[int, ...], int | None], ...] = ()
    # An offset from push constants: how it is computed from them (offset_at reads it).
    offset_expression: tuple = field(default=(), compare=False)

    def offset_at(self, constants) -> int | None:
        """The byte offset at a dispatch site passing ``constants``; None where not known."""
        if isinstance(self.offset, int):
            return self.offset
        return evaluate(self.offset_expression, constants) if self.offset_expression else None

    @property
    def dynamic(self) -> bool:
        return None in self.shape

    def dims(self) -> list[str]:
        """Each dimension as a kernel's author reads it: ``64``, ``?(push constants 4, 5 = w0)``."""
        named, found = iter(self.dynamic_dims), []
        for size in self.shape:
            if size is not None:
                found.append(str(size))
                continue
            constants, workload = next(named, ((), None))
            found.append(f"?({push_constants(constants)}"
                         + (f" = w{workload}" if workload is not None else "") + ")"
                         if constants else "?")
        return found

    def describe(self) -> str:
        """``writeonly 64x55x55xf32 at byte offset 3154176``."""
        where = f"at byte offset {self.offset}" if isinstance(self.offset, int) else \
            f"at a byte offset {self.offset}"
        return f"{self.access} {'x'.join(self.dims() + [self.element])} {where}"


def push_constants(ordinals) -> str:
    """``push constant 2``, ``push constants 4, 5``."""
    ordinals = list(ordinals)
    return (f"push constant{'s' if len(ordinals) > 1 else ''} "
            f"{', '.join(map(str, ordinals))}")


@dataclass(frozen=True)
class Executable:
    name: str
    backend: str              # "llvm-cpu", "vulkan-spirv", "cuda"
    format: str               # "embedded-elf-x86_64", "vulkan-spirv-fb", "cuda-nvptx-fb"
    exports: tuple[Export, ...]
    variant: str = ""         # the variant's symbol name
    target: str = ""          # the variant's #hal.executable.target attribute, as text
    binding_types: tuple[str, ...] = ()   # per binding, e.g. "readonly:tensor<4x16xf32>"
    # Per binding, the byte offsets its tensors start at inside the buffer
    # (real models pack several tensors in one), or "from push constants".
    binding_offsets: tuple[tuple[int | str, ...], ...] = ()
    subspans: tuple[Subspan, ...] = ()

    @property
    def export(self) -> Export:
        """The only export; dispatch executables have exactly one."""
        return self.exports[0]


_BINDING_RE = re.compile(r"#hal\.pipeline\.binding<(\w+)(?:,\s*\"?([\w|]+)\"?)?>")
_CONSTANTS_RE = re.compile(r"constants\s*=\s*(\d+)")
_TARGET_RE = re.compile(r"<\"([^\"]+)\",\s*\"([^\"]+)\"")


def parse_layout(text: str) -> Layout:
    bindings = tuple(
        Binding(i, kind, "ReadOnly" in (flags or "").split("|"), flags or "")
        for i, (kind, flags) in enumerate(_BINDING_RE.findall(text)))
    m = _CONSTANTS_RE.search(text)
    return Layout(bindings, int(m.group(1)) if m else 0)


_WARM_UP = Path(__file__).parents[1] / "data" / "warm_up.mlir"


def import_bindings_aside() -> None:
    """Start importing the MLIR bindings (0.1-0.4 s) and parsing a small executable (a process's
    first parse costs another 0.1-0.15 s) on a thread of their own, for a step that reads
    executables once the tool run it waits on has ended. A later import of the bindings waits
    for this one (Python's import lock) and no longer; one that failed here is tried again there.

    Not a daemon thread: a process that exits meanwhile (a fast failure) waits for it, as one
    whose interpreter shut down under C++ code parsing MLIR could die of SIGABRT."""
    if "iree.compiler.ir" not in sys.modules:
        threading.Thread(target=_warm_up, name="warm-up-mlir-bindings", daemon=False).start()


def _warm_up() -> None:
    try:
        read_executables(_WARM_UP.read_text(encoding="utf-8"), str(_WARM_UP))
    except Exception:       # the step that reads executables imports them again and says why
        pass


def read_executables(text: str, source: str = "<dump>") -> dict[str, Executable]:
    """Every hal.executable in ``text`` (an MLIR module), by symbol name."""
    return read_each(text, source, _executable)


def read_each(text: str, source: str, read: Callable[[str, object], T]) -> dict[str, T]:
    """``read(name, op)`` of every hal.executable op in ``text`` (an MLIR module), by symbol
    name, while the module is parsed; a UserError naming ``source`` where it does not parse."""
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise UserError(f"cannot parse executable sources: {e}", file=source) from None
        return {name: read(name, op) for op in _ops(module.operation, "hal.executable")
                for name in (ir.StringAttr(op.attributes["sym_name"]).value,)}


def _executable(name: str, op) -> Executable:
    from iree.compiler import ir

    variants = _ops(op, "hal.executable.variant")
    if not variants:
        return Executable(name, "", "", ())
    variant = variants[0]
    target = str(variant.attributes["target"])
    m = _TARGET_RE.search(target)
    backend, fmt = (m.group(1), m.group(2)) if m else ("", "")
    exports = []
    for export in _ops(variant, "hal.executable.export"):
        attrs = export.attributes
        size = None
        if "workgroup_size" in attrs:
            size = tuple(ir.IntegerAttr(a).value for a in ir.ArrayAttr(attrs["workgroup_size"]))
        layout = str(attrs["layout"])
        exports.append(Export(
            ir.StringAttr(attrs["sym_name"]).value,
            ir.IntegerAttr(attrs["ordinal"]).value if "ordinal" in attrs else len(exports),
            parse_layout(layout), size, layout, _workload(export), _count_text(export)))
    count = len(exports[0].layout.bindings) if exports else 0
    found = subspans(variant)
    return Executable(name, backend, fmt, tuple(exports),
                      ir.StringAttr(variant.attributes["sym_name"]).value, target,
                      binding_types(found, count), binding_offsets(found, count), found)


def binding_types(found: tuple[Subspan, ...], count: int) -> tuple[str, ...]:
    """What each binding holds (its first tensor), e.g. ``readonly:tensor<?x23xf32>``."""
    first: dict[int, str] = {}
    for s in found:
        dims = ["?" if d is None else str(d) for d in s.shape]
        first.setdefault(s.binding, f"{s.access}:tensor<{'x'.join(dims + [s.element])}>")
    return tuple(first.get(i, "") for i in range(count))


def binding_offsets(found: tuple[Subspan, ...], count: int) -> tuple[tuple[int | str, ...], ...]:
    """Per binding, the byte offsets its tensors start at, in order, each once.

    A constant offset is its value; one IREE passes at run time is
    ``"from push constants N, M"``.
    """
    offsets: dict[int, list[int | str]] = {}
    for s in found:
        if s.offset not in offsets.setdefault(s.binding, []):
            offsets[s.binding].append(s.offset)
    return tuple(tuple(offsets.get(i, ())) for i in range(count))


_DISPATCH_TENSOR_RE = re.compile(r"dispatch\.tensor<(\w+):tensor<([^>]*)>>")


def subspans(variant) -> tuple[Subspan, ...]:
    """Every tensor of an untranslated executable's bindings, in the order its code takes them.

    ``variant``: the hal.executable.variant op. Offsets and dynamic sizes are
    traced back through IREE's casts, ``util.assume.int`` and
    ``dispatch.workload.ordinal`` to the push constants they are loaded from.
    """
    from iree.compiler import ir

    found = []
    for op in ops_within(variant, "hal.interface.binding.subspan"):
        tensor = _DISPATCH_TENSOR_RE.search(str(op.results[0].type))
        if tensor is None:
            continue
        access, shape_text = tensor.groups()
        *dims, element = shape_text.split("x")
        shape = tuple(None if d == "?" else int(d) for d in dims)
        segments = list(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])) \
            if "operandSegmentSizes" in op.attributes else [0, 0]
        operands = list(op.operands)
        offset: int | str = 0
        expression: tuple = ()
        if segments[0]:
            value = _constant(operands[0])
            constants = _traced(operands[0])[0]
            offset = value if value is not None else \
                f"from {push_constants(constants) if constants else 'push constants'}"
            expression = _expression(operands[0]) or () if value is None else ()
        dynamic = tuple(_traced(v) for v in operands[segments[0]:])
        found.append(Subspan(ir.IntegerAttr(op.attributes["binding"]).value, offset, access,
                             element, shape, dynamic, expression))
    return tuple(found)


def _constant(value) -> int | None:
    from iree.compiler import ir

    owner = value.owner
    if getattr(owner, "name", "") != "arith.constant":
        return None
    try:
        return ir.IntegerAttr(owner.attributes["value"]).value
    except (TypeError, ValueError):
        return None


def _traced(value, depth: int = 0) -> tuple[tuple[int, ...], int | None]:
    """The push constants ``value`` is computed from, and the workload value it is (or None)."""
    from iree.compiler import ir

    owner = value.owner
    name = getattr(owner, "name", "")
    if depth > 32 or not name or name == "arith.constant":
        return (), None
    if name == "hal.interface.constant.load":
        return (ir.IntegerAttr(owner.attributes["ordinal"]).value,), None
    operands = list(owner.operands)
    if name == "util.assume.int" and isinstance(value, ir.OpResult):
        operands = [operands[value.result_number]]
    constants, workload = set(), None
    for operand in operands:
        more, inner = _traced(operand, depth + 1)
        constants.update(more)
        workload = workload if workload is not None else inner
    if name == "iree_tensor_ext.dispatch.workload.ordinal":
        workload = ir.IntegerAttr(owner.attributes["ordinal"]).value
    return tuple(sorted(constants)), workload


# Integer ops an offset is computed with from push constants, as Python computes them.
_ARITHMETIC = {"arith.addi": lambda a, b: a + b, "arith.subi": lambda a, b: a - b,
               "arith.muli": lambda a, b: a * b, "arith.shli": lambda a, b: a << b,
               "arith.shrui": lambda a, b: a >> b, "arith.ori": lambda a, b: a | b,
               "arith.andi": lambda a, b: a & b, "arith.xori": lambda a, b: a ^ b,
               "arith.divui": lambda a, b: a // b if b else None,
               "arith.remui": lambda a, b: a % b if b else None}
_CASTS = ("arith.index_castui", "arith.index_cast", "arith.extui", "arith.extsi",
          "arith.trunci")


def _expression(value, depth: int = 0) -> tuple | None:
    """How ``value`` is computed from push constants, as nested tuples; None where it is not
    only integer arithmetic on them: ("constant", n), ("push", ordinal), (op name, a, b)."""
    from iree.compiler import ir

    owner = value.owner
    name = getattr(owner, "name", "")
    if depth > 32 or not name:
        return None
    if name == "arith.constant":
        number = _constant(value)
        return None if number is None else ("constant", number)
    if name == "hal.interface.constant.load":
        return ("push", ir.IntegerAttr(owner.attributes["ordinal"]).value)
    operands = list(owner.operands)
    if name == "util.assume.int" and isinstance(value, ir.OpResult):
        return _expression(operands[value.result_number], depth + 1)
    if name in _CASTS and len(operands) == 1:
        return _expression(operands[0], depth + 1)
    if name in _ARITHMETIC and len(operands) == 2:
        a, b = (_expression(o, depth + 1) for o in operands)
        return None if a is None or b is None else (name, a, b)
    return None


def evaluate(expression: tuple, constants) -> int | None:
    """``expression`` (``_expression``'s) with the push constants ``constants`` (32-bit words)."""
    kind = expression[0]
    if kind == "constant":
        return expression[1]
    if kind == "push":
        ordinal = expression[1]
        if ordinal >= len(constants) or constants[ordinal] is None:
            return None
        return constants[ordinal] & 0xFFFFFFFF
    a, b = (evaluate(e, constants) for e in expression[1:])
    return None if a is None or b is None else _ARITHMETIC[kind](a, b)


def ops_within(parent, name: str) -> list:
    """Every op named ``name`` nested anywhere in ``parent``, in order."""
    found = []
    for region in parent.regions:
        for block in region.blocks:
            for op in block.operations:
                op = op.operation
                if op.name == name:
                    found.append(op)
                found += ops_within(op, name)
    return found


def _count_text(export) -> str:
    if not len(export.regions) or not len(export.regions[0].blocks):
        return ""
    return "\n".join(_text(op.operation) for op in export.regions[0].blocks[0].operations)


def _text(op) -> str:
    """``op`` as MLIR prints it; without assume_verified every print verifies the op again."""
    return op.get_asm(assume_verified=True, use_local_scope=True).rstrip("\n")


def _workload(export) -> int:
    """Arguments of the count region after the device."""
    region = export.regions[0] if len(export.regions) else None
    if region is None or not len(region.blocks):
        return 0
    return max(len(region.blocks[0].arguments) - 1, 0)


def _ops(parent, name: str) -> list:
    found = []
    for region in parent.regions:
        for block in region.blocks:
            for op in block.operations:
                if op.operation.name == name:
                    found.append(op.operation)
    return found
