"""The facts of a GEMM executable, as records, and where its tensors lie in its bindings.

``Contraction`` is what a kernel family specializes on (``ir.contractions`` reads
it off an executable; ``ir.epilogues`` reads the elementwise op fused after the
matmul); the readers here find an operand's binding, byte offset and shape from
the load or store of a whole ``hal.interface.binding.subspan``, for both.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from iree_kernels.ir.executables import _constant, _expression, _traced

_LOAD = "iree_tensor_ext.dispatch.tensor.load"
_SUBSPAN = "hal.interface.binding.subspan"
_TENSOR_RE = re.compile(r"tensor<((?:(?:\d+|\?)x)*\w+)>")
AFFINE_MAP_RE = re.compile(r"affine_map<\(([^)]*)\)\s*->\s*\(([^)]*)\)>")


@dataclass(frozen=True)
class Operand:
    """One tensor of a GEMM in its binding: row-major ``shape`` of ``element``.

    ``offset``: bytes from the binding's start, or the push-constant expression
    (``executables._expression``'s nested tuples) it is computed from at each
    dispatch site. ``dims``: the loop each of its dimensions runs over, ``b``, ``m``,
    ``n`` or ``k``.
    """
    binding: int
    offset: int | tuple
    shape: tuple[int, ...]
    element: str
    dims: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    """A tensor IREE folded into the executable (a bias among the weights): its every element."""
    shape: tuple[int, ...]
    element: str
    dims: tuple[str, ...]
    values: tuple


@dataclass(frozen=True)
class Contraction:
    """One GEMM executable: ``out[b, m, n] = epilogue(sum_k lhs[b, m, k] * rhs[b, k, n])``."""
    op: str                         # "matmul", "batch_matmul", "matmul_transpose_b", ...
    batch: int                      # 1 for an unbatched matmul
    m: int
    n: int
    k: int
    lhs: Operand
    rhs: Operand
    out: Operand
    accumulator: str                # the element type the products are summed in
    inputs: tuple[Operand, ...] = ()   # the epilogue's other tensors (bias, residual)
    tables: tuple[Table, ...] = ()     # the epilogue's folded tensors
    # The epilogue as nested lists: ["acc"], ["input", i], ["table", i], ["const", value, type],
    # ["cast", type, x], ["cmp", predicate, x, y] (arith.cmpf's, e.g. "ugt"), ["select", c, x, y],
    # [name, x, ...] with name one of
    # epilogues.EPILOGUE_OPS' other values; ["acc"] alone:
    # the sum is stored as it is.
    epilogue: tuple = ("acc",)
    constants: int = 0              # push constants the executable takes
    bindings: int = 0               # bindings it takes

    @property
    def sizes(self) -> dict[str, int]:
        """The loop sizes by name: what workgroup counts and kernels are written over."""
        return {"batch": self.batch, "m": self.m, "n": self.n, "k": self.k}

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Contraction":
        operand = lambda d: Operand(d["binding"], _tuples(d["offset"]), tuple(d["shape"]),
                                    d["element"], tuple(d["dims"]))
        return cls(data["op"], data["batch"], data["m"], data["n"], data["k"],
                   operand(data["lhs"]), operand(data["rhs"]), operand(data["out"]),
                   data["accumulator"], tuple(operand(d) for d in data["inputs"]),
                   tuple(Table(tuple(t["shape"]), t["element"], tuple(t["dims"]),
                               tuple(t["values"])) for t in data["tables"]),
                   _tuples(data["epilogue"]), data["constants"], data["bindings"])

    def describe(self) -> str:
        """``batch_matmul 4x2048x2048x128 f32 -> f32, epilogue (div acc 8.0)``."""
        sizes = (f"{self.batch}x" if self.op.startswith("batch") else "") + \
            f"{self.m}x{self.n}x{self.k}"
        tail = "" if self.epilogue == ("acc",) else f", epilogue {expression_text(self.epilogue)}"
        loops = ("b", "m", "n") if self.op.startswith("batch") else ("m", "n")
        if self.out.dims != loops:
            tail += f", stored as ({', '.join(self.out.dims)})"
        return f"{self.op} {sizes} {self.lhs.element} -> {self.out.element}{tail}"


class NotAContraction(Exception):
    """Why an executable is not a GEMM this module reads: one sentence."""


def expression_text(tree) -> str:
    """``(add acc input0)``: an epilogue as a reader reads it."""
    if tree[0] in ("acc",):
        return "acc"
    if tree[0] in ("input", "table"):
        return f"{tree[0]}{tree[1]}"
    if tree[0] == "const":
        return repr(tree[1])
    return "(" + " ".join([str(tree[0]), *(expression_text(t) if isinstance(t, (list, tuple))
                                           else str(t) for t in tree[1:])]) + ")"


def tensor_shape(type_) -> tuple[tuple[int, ...], str]:
    found = _TENSOR_RE.search(str(type_))
    if found is None:
        raise NotAContraction(f"an operand of type {type_} is not a tensor")
    *dims, element = found.group(1).split("x")
    if "?" in dims:
        raise NotAContraction("its sizes are dynamic (specialize the model first)")
    return tuple(int(d) for d in dims), element


def loaded_operand(value, dims: tuple[str, ...], role: str) -> Operand:
    """The Operand a whole-tensor load gives ``value``."""
    load = value.owner
    if getattr(load, "name", "") != _LOAD:
        raise NotAContraction(f"its {role} is computed in the dispatch "
                              f"({getattr(load, 'name', 'an argument')}), not loaded")
    return bound_operand(load.operands[0], load, dims, role)


def bound_operand(subspan_value, access, dims: tuple[str, ...], role: str) -> Operand:
    """Where ``subspan_value`` (a binding subspan) lies; ``access``: the load or store of it
    in whole (no dynamic or partial window)."""
    from iree.compiler import ir

    subspan = subspan_value.owner
    if getattr(subspan, "name", "") != _SUBSPAN:
        raise NotAContraction(f"its {role} is not read from a binding")
    shape, element = tensor_shape(subspan.results[0].type)
    sizes = list(ir.DenseI64ArrayAttr(access.attributes["static_sizes"]))
    offsets = list(ir.DenseI64ArrayAttr(access.attributes["static_offsets"]))
    strides = list(ir.DenseI64ArrayAttr(access.attributes["static_strides"]))
    if sizes != list(shape) or any(offsets) or any(s != 1 for s in strides):
        raise NotAContraction(f"its {role} is a window of its tensor, not the whole of it")
    segments = list(ir.DenseI32ArrayAttr(subspan.attributes["operandSegmentSizes"])) \
        if "operandSegmentSizes" in subspan.attributes else [0, 0]
    offset: int | tuple = 0
    if segments[0]:
        byte_offset = subspan.operands[0]
        offset = _constant(byte_offset)
        if offset is None:
            offset = _expression(byte_offset)
            if offset is None:
                raise NotAContraction(f"its {role}'s byte offset is computed from push "
                                      f"constants {_traced(byte_offset)[0]} in a way the "
                                      "facts do not read")
    binding = ir.IntegerAttr(subspan.attributes["binding"]).value
    if len(shape) != len(dims):
        raise NotAContraction(f"its {role} has {len(shape)} dimensions, not {len(dims)}")
    return Operand(binding, offset, shape, element, dims)


def map_dims(text: str, loops: tuple[str, ...]) -> tuple[str, ...]:
    """The loops an indexing map's results are, by name: ``(d0, d2)`` of (b, m, n) -> (b, n)."""
    found = AFFINE_MAP_RE.search(text)
    if found is None:
        raise NotAContraction(f"the op after its matmul has the indexing map {text}")
    names = [d.strip() for d in found.group(1).split(",") if d.strip()]
    results = [r.strip() for r in found.group(2).split(",") if r.strip()]
    if len(names) != len(loops) or any(r not in names for r in results):
        raise NotAContraction(f"the op after its matmul has the indexing map {text}, which is "
                              "not a projection of its loops")
    return tuple(loops[names.index(r)] for r in results)


def _tuples(value):
    """Lists read back from JSON, as the tuples the facts hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
