"""What a model's executables are, read from an executable-sources dump.

``iree-compile --compile-to=executable-sources`` writes the program with each
``hal.executable`` still in source form; this module reads it with the MLIR
Python bindings shipped in iree-base-compiler and returns plain records:
names, export names, pipeline layouts. It does not run iree-compile.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import UserError


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
    offset: int | str         # bytes from the binding's start, or "from push constants"
    access: str               # "readonly", "writeonly", "readwrite"
    element: str              # "f32"
    shape: tuple[int | None, ...]   # None: a dynamic dimension

    @property
    def dynamic(self) -> bool:
        return None in self.shape


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


def read_executables(text: str, source: str = "<dump>") -> dict[str, Executable]:
    """Every hal.executable in ``text`` (an MLIR module), by symbol name."""
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise UserError(f"cannot parse executable sources: {e}", file=source) from None
        executables = {}
        for op in _ops(module.operation, "hal.executable"):
            name = ir.StringAttr(op.attributes["sym_name"]).value
            executables[name] = _executable(name, op)
    return executables


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
    text, count = _text(variant), len(exports[0].layout.bindings) if exports else 0
    return Executable(name, backend, fmt, tuple(exports),
                      ir.StringAttr(variant.attributes["sym_name"]).value, target,
                      _binding_types(text, count), binding_offsets(text, count),
                      subspans(text))


_SUBSPAN_RE = re.compile(r"binding\((\d+)\)[^\n]*?: !iree_tensor_ext\.dispatch\.tensor<(\w+:tensor<[^>]*>)>")


def _binding_types(text: str, count: int) -> tuple[str, ...]:
    """What each binding holds, from the subspans of an untranslated executable."""
    found = {int(i): kind for i, kind in _SUBSPAN_RE.findall(text)}
    return tuple(found.get(i, "") for i in range(count))


_OFFSET_RE = re.compile(r"binding\((\d+)\)[^\n]*? offset\((%[\w.$#-]+)\)")
_INDEX_CONSTANT_RE = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (\d+) : index$", re.M)


def binding_offsets(text: str, count: int) -> tuple[tuple[int | str, ...], ...]:
    """Per binding, the byte offsets of its subspans in an untranslated executable, in order.

    A constant offset is its value; one IREE passes at run time (computed from
    push constants) is ``"from push constants"``.
    """
    constants = {name: int(value) for name, value in _INDEX_CONSTANT_RE.findall(text)}
    found: dict[int, list[int | str]] = {}
    for binding, offset in _OFFSET_RE.findall(text):
        value = constants.get(offset, "from push constants")
        if value not in found.setdefault(int(binding), []):
            found[int(binding)].append(value)
    return tuple(tuple(found.get(i, ())) for i in range(count))


_SUBSPAN_LINE_RE = re.compile(
    r"hal\.interface\.binding\.subspan [^\n]*?binding\((\d+)\)(?:[^\n]*? offset\((%[\w.$#-]+)\))?"
    r"[^\n]*?: !iree_tensor_ext\.dispatch\.tensor<(\w+):tensor<([^>]*)>>")


def subspans(text: str) -> tuple[Subspan, ...]:
    """Every tensor of an untranslated executable's bindings, in the order its code takes them."""
    constants = {name: int(value) for name, value in _INDEX_CONSTANT_RE.findall(text)}
    found = []
    for binding, offset, access, tensor in _SUBSPAN_LINE_RE.findall(text):
        *dims, element = tensor.split("x")
        found.append(Subspan(int(binding),
                             constants.get(offset, "from push constants") if offset else 0,
                             access, element, tuple(None if d == "?" else int(d) for d in dims)))
    return tuple(found)


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
