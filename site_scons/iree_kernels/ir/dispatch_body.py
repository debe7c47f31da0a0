"""What a dispatch computes, read from its dumped source, for the comments of a kernel skeleton.

A skeleton's signature and offsets come from the executable's layout
(``executables``); what the kernel must compute is in the dispatch function's
body: its linalg ops, the constants IREE folded into the executable (they are
in no binding, so the kernel holds them itself) and the window of each output
binding it writes (IREE writes a producer's result straight into the padded
buffer its consumer reads: the window is the part inside the padding). This
module reads them from the text IREE prints for one executable
(``dump/sources/*.mlir``): the statements of the function at the top level,
each with its nested regions, as printed. Not for: checking or translating the
body (IREE does that), or anything the build decides.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

# Statements that only move push constants and bindings into place: the skeleton's
# signature and offsets already say what they do.
_PLUMBING = ("hal.interface.", "util.assume.", "iree_tensor_ext.dispatch.workload.",
             "flow.dispatch.workload.")
_LOAD = re.compile(r"^(%[\w.$#-]+) = (?:iree_tensor_ext|flow)\.dispatch\.tensor\.load "
                   r"(%[\w.$#-]+)(.*)$")
_STORE = re.compile(r"^(?:iree_tensor_ext|flow)\.dispatch\.tensor\.store (%[\w.$#-]+), "
                    r"(%[\w.$#-]+)(.*)$")
_SUBSPAN = re.compile(r"^(%[\w.$#-]+) = hal\.interface\.binding\.subspan .*?binding\((\d+)\)"
                      r".*dispatch\.tensor<(\w+):tensor<([^>]*)>>")
_OFFSET = re.compile(r"\) offset\((%[\w.$#-]+)\)")
_CONSTANT = re.compile(r"^(%[\w.$#-]+) = arith\.constant (.*) : (\S+)$")
_RESULT = re.compile(r"^(%[\w.$#-]+(?::\d+)?(?:, %[\w.$#-]+)*) = ([\w.]+)")
_WINDOW = re.compile(r"offsets = \[([^\]]*)\], sizes = \[([^\]]*)\], strides = \[([^\]]*)\]")
_SHOWN = 160          # characters of a constant's value shown; the dumped source has them all
WRITTEN_OUT = 1 << 16          # elements of a folded constant a skeleton writes out
_NUMPY_TYPES = {"f32": "<f4", "f64": "<f8", "i8": "<i1", "i16": "<i2", "i32": "<i4",
                "i64": "<i8", "i1": "<u1"}
_RESOURCE = re.compile(r'^\s*"?([\w.$-]+)"?: "0x([0-9A-Fa-f]*)"', re.M)


@dataclass(frozen=True)
class Constant:
    """A value IREE folded into the executable: no binding carries it."""
    name: str            # its SSA name in the body: "%cst_0"
    type: str            # "tensor<4xf32>", "f32"
    value: str           # as printed, cut at _SHOWN characters
    # Every element, in row-major order, where the tensor is not a splat and has at most
    # WRITTEN_OUT of them: what a skeleton writes out as an array.
    elements: tuple = field(default=(), compare=False)

    @property
    def element_type(self) -> str:
        found = re.fullmatch(r"tensor<(?:[0-9]+x)*(\w+)>", self.type)
        return found.group(1) if found else ""

    @property
    def identifier(self) -> str:
        """Its name as a C or GLSL identifier: "cst_0"."""
        return re.sub(r"\W", "_", self.name.lstrip("%"))

    def describe(self) -> str:
        """``%cst_0 : tensor<4xf32> = dense<[...]> (4 values: ...)``: how the kernel gets it."""
        shape = re.fullmatch(r"tensor<(.*)x(\w+)>", self.type) or \
            re.fullmatch(r"tensor<(\w+)>", self.type)
        if not shape or not self.type.startswith("tensor<"):
            return f"{self.name} = {self.value} : {self.type}"
        dims = shape.group(1).split("x") if shape.lastindex == 2 else []
        count = 1
        for d in dims:
            count *= int(d) if d.isdigit() else 0
        if self.value.startswith("dense_resource<"):
            how = ("its bytes are the model's resource of that name ({-# dialect_resources #-} "
                   "in executables.mlir); the kernel holds a copy")
        elif re.fullmatch(r"dense<[^\[,]*>", self.value):
            how = "a splat: every element is that one value"
        else:
            how = f"{count} values: e.g. a static const array in the kernel"
        return f"{self.name} : {self.type} = {self.value} ({how})"


@dataclass(frozen=True)
class Window:
    """Where one store writes in its binding's tensor."""
    binding: int
    value: str           # the SSA value stored
    tensor: str          # the binding's tensor: "readwrite 4x10x10xf32 at byte offset 1600"
    offsets: tuple[str, ...]
    sizes: tuple[str, ...]
    strides: tuple[str, ...]
    whole: bool          # the store writes the whole tensor

    def describe(self) -> str:
        if self.whole:
            return f"binding {self.binding} ({self.tensor}): {self.value} fills all of it"
        ranges = ", ".join(_range(o, s, t) for o, s, t in zip(self.offsets, self.sizes,
                                                                 self.strides))
        return (f"binding {self.binding} ({self.tensor}): {self.value} goes in [{ranges}] "
                f"(offsets [{', '.join(self.offsets)}], sizes [{', '.join(self.sizes)}]); "
                "the elements around it are not written here (the padding its consumer "
                "reads: IREE fills it)")


@dataclass(frozen=True)
class Body:
    ops: tuple[str, ...] = ()                   # the computation's statements, as printed
    constants: tuple[Constant, ...] = ()
    windows: tuple[Window, ...] = ()
    inputs: tuple[str, ...] = field(default=())  # "%3 = binding 0 (readonly 4x10x10xf32 ...)"

    def __bool__(self) -> bool:
        return bool(self.ops or self.windows)


def _range(offset: str, size: str, stride: str) -> str:
    if offset.isdigit() and size.isdigit():
        end = int(offset) + int(size) * (int(stride) if stride.isdigit() else 1)
        return f"{offset}:{end}" + (f":{stride}" if stride != "1" else "")
    return f"{offset}:+{size}" + (f":{stride}" if stride != "1" else "")


def read(text: str) -> Body:
    """The body of the (only) dispatch function in ``text``, one executable as IREE prints it;
    an empty Body where there is none."""
    statements = _statements(text)
    if statements is None:
        return Body()
    indices: dict[str, str] = {}
    bindings: dict[str, tuple[int, str]] = {}
    ops, constants, windows, inputs = [], [], [], []
    resources = None            # the dump's resource blobs, read where a constant names one
    for lines in statements:
        first = lines[0]
        subspan = _SUBSPAN.match(first)
        if subspan:
            name, binding, access, shape = subspan.groups()
            offset = _OFFSET.search(first)
            at = indices.get(offset.group(1)) if offset else "0"
            where = f"at byte offset {at}" if at else "at a byte offset from push constants"
            bindings[name] = (int(binding), f"{access} {shape} {where}")
            continue
        constant = _CONSTANT.match(first)
        if constant and len(lines) == 1:
            name, value, type_ = constant.groups()
            if type_ == "index":
                indices[name] = value
                continue
            if resources is None and "dense_resource<" in value:
                resources = resources_of(text)
            elements = folded_elements(value, type_, resources or {})
            if len(value) > _SHOWN:
                value = value[:_SHOWN] + "...(cut: the dumped source has every value)"
            constants.append(Constant(name, type_, value, elements))
            continue
        load = _LOAD.match(first)
        if load and load.group(2) in bindings:
            binding, tensor = bindings[load.group(2)]
            inputs.append(f"{load.group(1)} = binding {binding} ({tensor})")
            continue
        store = _STORE.match(first)
        if store and store.group(2) in bindings:
            binding, tensor = bindings[store.group(2)]
            window = _WINDOW.search(store.group(3))
            offsets, sizes, strides = (tuple(p.strip() for p in g.split(",")) for g in
                                       window.groups()) if window else ((), (), ())
            shape = tuple(tensor.split(" ")[1].split("x")[:-1])
            whole = all(o == "0" for o in offsets) and len(sizes) == len(shape) and \
                all(d in (s, "?") for s, d in zip(sizes, shape)) and \
                all(s == "1" for s in strides)
            windows.append(Window(binding, store.group(1), tensor, offsets, sizes, strides,
                                  whole))
            continue
        op = _RESULT.match(first)
        name = op.group(2) if op else first.split(" ", 1)[0]
        if name.startswith(_PLUMBING) or name == "return" or _index_arithmetic(first, name):
            continue
        ops.extend(lines)
    # The constants the computation reads (others size or offset the bindings).
    text = "\n".join(ops)
    used = tuple(c for c in constants if re.search(re.escape(c.name) + r"(?![\w.$-])", text))
    return Body(tuple(ops), used, tuple(windows), tuple(inputs))


def _index_arithmetic(line: str, name: str) -> bool:
    """Scalar arith on indices or push-constant words at the top level: sizes and offsets."""
    return name.startswith("arith.") and bool(re.search(r": (?:index|i32|i64)(?: to \w+)?$",
                                                        line))


def _statements(text: str) -> list[list[str]] | None:
    """The dispatch function's top-level statements, each a list of lines (nested regions
    included), dedented to the body's indentation."""
    lines = text.splitlines()
    start = next((n for n, line in enumerate(lines) if line.lstrip().startswith("func.func @")),
                 None)
    if start is None:
        return None
    head = len(lines[start]) - len(lines[start].lstrip())
    body: list[str] = []
    for line in lines[start + 1:]:
        indent = len(line) - len(line.lstrip())
        if line.strip() == "}" and indent <= head:
            break
        body.append(line)
    if not body:
        return None
    base = min(len(line) - len(line.lstrip()) for line in body if line.strip())
    statements: list[list[str]] = []
    for line in body:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        if indent == base and not line.lstrip().startswith(("}", "^")):
            statements.append([line[base:]])
        elif statements:
            statements[-1].append(line[base:])
    return statements


def resources_of(text: str) -> dict[str, str]:
    """The hex of each resource blob in ``text``'s ``{-# dialect_resources #-}``, by name."""
    start = text.find("{-#")
    return {m.group(1): m.group(2) for m in _RESOURCE.finditer(text, start)} if start >= 0 \
        else {}


def folded_elements(value: str, type_: str, resources: dict[str, str]) -> tuple:
    """The elements of a folded tensor constant (``dense<[...]>``, ``dense<"0x...">`` or
    ``dense_resource<name>`` with its data in ``resources``); () for a splat, a type
    without a numpy equivalent, or more than WRITTEN_OUT elements."""
    import numpy as np                     # only where a skeleton is written
    shape = re.fullmatch(r"tensor<((?:[0-9]+x)*)(\w+)>", type_)
    if not shape or shape.group(2) not in _NUMPY_TYPES:
        return ()
    count = 1
    for d in shape.group(1).split("x")[:-1]:
        count *= int(d)
    if not 1 < count <= WRITTEN_OUT:
        return ()
    dtype = np.dtype(_NUMPY_TYPES[shape.group(2)])
    data = None
    resource = re.fullmatch(r"dense_resource<([\w.$-]+)>", value)
    if resource:
        blob = resources.get(resource.group(1))
        data = bytes.fromhex(blob)[4:] if blob else None       # 4 bytes: the alignment
    elif (hexadecimal := re.fullmatch(r'dense<"0x([0-9A-Fa-f]*)">', value)):
        data = bytes.fromhex(hexadecimal.group(1))
    elif value.startswith("dense<[") and value.endswith("]>"):
        if "0x" in value:                   # bit patterns of floats: not written out
            return ()
        words = re.findall(r"[-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan|true|false)",
                           value[6:-1])
        if len(words) != count:
            return ()
        numbers = [1 if w == "true" else 0 if w == "false" else float(w) for w in words]
        return tuple(np.array(numbers).astype(dtype).tolist())
    if data is None or len(data) != count * dtype.itemsize:
        return ()
    return tuple(np.frombuffer(data, dtype).tolist())
