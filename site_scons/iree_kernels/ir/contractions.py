"""What a GEMM executable computes, read off its MLIR: the facts a kernel family specializes on.

A dispatch IREE forms around a matmul loads its operands whole, contracts them
(``linalg.matmul``, ``linalg.batch_matmul``, their ``_transpose_a``/``_transpose_b``
forms) into a zero-filled accumulator, may apply one elementwise
``linalg.generic`` to the result (a bias, a residual, an activation, a scale, a
transposed store) and stores it whole. ``read_contractions`` gives, per
executable, a ``Contraction`` of that shape (sizes, element types, which
binding and byte offset each operand is at, the epilogue as an expression
tree), or the reason it is not one, in a sentence. A kernel family
(``project.families``) takes the first and declines the second.

Not for: rendering kernels from the facts (``kinds.gemm_interface``).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from iree_kernels.ir.dispatch_body import folded_elements, resources_of
from iree_kernels.ir.executables import _constant, _expression, _traced, ops_within

# The contraction ops read, with (batched, transposed lhs, transposed rhs).
_CONTRACTIONS = {
    "linalg.matmul": (False, False, False),
    "linalg.matmul_transpose_a": (False, True, False),
    "linalg.matmul_transpose_b": (False, False, True),
    "linalg.batch_matmul": (True, False, False),
    "linalg.batch_matmul_transpose_a": (True, True, False),
    "linalg.batch_matmul_transpose_b": (True, False, True),
}
_LOAD = "iree_tensor_ext.dispatch.tensor.load"
_STORE = "iree_tensor_ext.dispatch.tensor.store"
_SUBSPAN = "hal.interface.binding.subspan"
# Elementwise ops an epilogue may hold, by the name the expression tree gives them.
EPILOGUE_OPS = {
    "arith.addf": "add", "arith.subf": "sub", "arith.mulf": "mul", "arith.divf": "div",
    "arith.negf": "neg", "arith.maximumf": "max", "arith.minimumf": "min",
    "arith.maxnumf": "max", "arith.minnumf": "min", "math.erf": "erf", "math.exp": "exp",
    "math.tanh": "tanh", "math.sqrt": "sqrt", "math.rsqrt": "rsqrt", "math.log": "log",
    "math.absf": "abs", "arith.truncf": "cast", "arith.extf": "cast", "arith.cmpf": "cmp",
    "arith.select": "select",
}
# arith.cmpf's predicate attribute, by its value (MLIR's CmpFPredicate).
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge",
                   "ult", "ule", "une", "uno", "true")
_TENSOR_RE = re.compile(r"tensor<((?:(?:\d+|\?)x)*\w+)>")
_MAP_RE = re.compile(r"affine_map<\(([^)]*)\)\s*->\s*\(([^)]*)\)>")
DEEPEST = 64                    # epilogue expression nesting
MAX_POWER = 8                   # math.fpowi's exponent, written as products


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
    # [name, x, ...] with name one of EPILOGUE_OPS' other values; ["acc"] alone:
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


def read_contractions(text: str, source: str = "<dump>") -> dict[str, Contraction | str]:
    """Per executable of ``text`` (MLIR, untranslated), its Contraction or why it is not one."""
    from iree.compiler import ir

    from iree_kernels.core.errors import UserError

    found: dict[str, Contraction | str] = {}
    resources = resources_of(text)
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise UserError(f"cannot parse executable sources: {e}", file=source) from None
        for op in ops_within(module.operation, "hal.executable"):
            name = ir.StringAttr(op.attributes["sym_name"]).value
            try:
                found[name] = contraction_of(op, resources)
            except NotAContraction as e:
                found[name] = str(e)
    return found


def contraction_of(executable, resources: dict[str, str]) -> Contraction:
    """The Contraction of one ``hal.executable`` op; NotAContraction says why it is none.
    ``resources``: the program's resource blobs by name, where folded tensors' data is."""
    from iree.compiler import ir

    functions = ops_within(executable, "func.func")
    if len(functions) != 1:
        raise NotAContraction(f"it holds {len(functions)} functions, not one")
    layouts = ops_within(executable, "hal.executable.export")
    layout = str(layouts[0].attributes["layout"]) if layouts else ""
    body = [op.operation for op in functions[0].regions[0].blocks[0].operations]
    matmuls = [op for op in body if op.name in _CONTRACTIONS or _generic_contraction(op)]
    if not matmuls:
        raise NotAContraction("it holds no linalg matmul op")
    if len(matmuls) > 1:
        raise NotAContraction(f"it holds {len(matmuls)} matmuls, not one")
    matmul = matmuls[0]
    if matmul.name == "linalg.generic":         # IREE's matmul_like: a contraction by maps
        batched, lhs_dims, rhs_dims = _generic_dims(matmul)
        loops = ("b",) * batched + ("m", "n")
    else:
        batched = _CONTRACTIONS[matmul.name][0]
        loops = ("b",) * batched + ("m", "n")
        lhs_dims, rhs_dims = _operand_dims(matmul, loops)
    operands = list(matmul.operands)
    out_shape, accumulator = _shape(operands[2].type)
    if not _zero_filled(operands[2]):
        raise NotAContraction("it accumulates into a tensor it loads, not into zeros")
    lhs = _loaded(operands[0], lhs_dims, "LHS")
    rhs = _loaded(operands[1], rhs_dims, "RHS")
    batch = out_shape[0] if batched else 1
    m, n = out_shape[-2:]
    k = lhs.shape[lhs_dims.index("k")]
    op = ("batch_matmul" if batched else "matmul") + \
        ("_transpose_a" if lhs_dims[-1] == "m" else "") + \
        ("_transpose_b" if rhs_dims[-1] == "k" else "") + \
        ("_like" if matmul.name == "linalg.generic" else "")
    result = matmul.results[0]
    users = [use.owner for use in result.uses]
    if len(users) != 1:
        raise NotAContraction(f"its matmul's result has {len(users)} users, not one")
    user = users[0]
    inputs, tables, epilogue = (), (), ("acc",)
    if user.name == "linalg.generic":
        inputs, tables, epilogue, stored, out_dims = _epilogue(user, result, loops, resources)
    elif user.name == _STORE:
        stored, out_dims = result, loops
    else:
        raise NotAContraction(f"its matmul's result goes to {user.name}, not to a store or "
                              "one elementwise linalg.generic")
    out = _stored(stored, out_dims)
    constants = int(re.search(r"constants\s*=\s*(\d+)", layout).group(1)) \
        if "constants" in layout else 0
    return Contraction(op, batch, m, n, k, lhs, rhs, out,
                       accumulator, inputs, tables, epilogue, constants,
                       layout.count("#hal.pipeline.binding<"))


def _generic_contraction(op) -> bool:
    """Whether ``op`` is a linalg.generic that sums products of its two inputs over one loop."""
    from iree.compiler import ir

    if op.name != "linalg.generic" or len(op.operands) != 3:
        return False
    kinds = str(op.attributes["iterator_types"])
    if kinds.count("reduction") != 1 or kinds.count("parallel") not in (2, 3):
        return False
    payload = [o.operation.name for o in op.regions[0].blocks[0].operations]
    return [p for p in payload if p not in ("arith.extf", "arith.extsi")] in \
        (["arith.mulf", "arith.addf", "linalg.yield"],
         ["arith.muli", "arith.addi", "linalg.yield"])


def _generic_dims(generic) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """(batched, the LHS's dims, the RHS's dims) of a generic contraction: its output's dims
    are (b,) m, n in order, the reduced loop is k; the LHS is the input that has m."""
    from iree.compiler import ir

    maps = [_MAP_RE.search(str(m)) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if len(maps) != 3 or not all(maps):
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    names = [d.strip() for d in maps[0].group(1).split(",")]
    results = [[r.strip() for r in found.group(2).split(",")] for found in maps]
    reduced = [d for d in names if d not in results[2]]
    if len(reduced) != 1 or any(r not in names for dims in results for r in dims):
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    loops = ("b",) * (len(results[2]) == 3) + ("m", "n")
    loop_of = {**dict(zip(results[2], loops)), reduced[0]: "k"}
    dims = [tuple(loop_of[r] for r in results[i]) for i in (0, 1)]
    if "m" in dims[1] and "n" in dims[0]:
        raise NotAContraction("its contraction reads its operands the other way round")
    if any(sorted(d) != sorted(set(d)) or "k" not in d for d in dims) or \
            "m" not in dims[0] or "n" not in dims[1]:
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    return len(loops) == 3, dims[0], dims[1]


def _operand_dims(matmul, loops: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The loops the LHS's and the RHS's dimensions run over, from the op's indexing maps
    (the result's are ``loops``; the one it lacks is ``k``), or the op's name's defaults."""
    from iree.compiler import ir

    batched, transpose_lhs, transpose_rhs = _CONTRACTIONS[matmul.name]
    lead = ("b",) if batched else ()
    if "indexing_maps" not in matmul.attributes:
        return (lead + (("k", "m") if transpose_lhs else ("m", "k")),
                lead + (("n", "k") if transpose_rhs else ("k", "n")))
    maps = [str(m) for m in ir.ArrayAttr(matmul.attributes["indexing_maps"])]
    parsed = [_MAP_RE.search(m) for m in maps]
    if len(maps) != 3 or not all(parsed):
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    names = [d.strip() for d in parsed[0].group(1).split(",")]
    results = [[r.strip() for r in p.group(2).split(",")] for p in parsed]
    if sorted(results[2]) != sorted(set(results[2])) or len(results[2]) != len(loops) or \
            len(names) != len(loops) + 1:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    loop_of = dict(zip(results[2], loops))
    loop_of.update({d: "k" for d in names if d not in results[2]})
    try:
        found = tuple(tuple(loop_of[r] for r in dims) for dims in results[:2])
    except KeyError:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}") from None
    if any(sorted(dims) != sorted(set(dims)) for dims in found) or \
            "k" not in found[0] or "k" not in found[1]:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    return found


def _shape(type_) -> tuple[tuple[int, ...], str]:
    found = _TENSOR_RE.search(str(type_))
    if found is None:
        raise NotAContraction(f"an operand of type {type_} is not a tensor")
    *dims, element = found.group(1).split("x")
    if "?" in dims:
        raise NotAContraction("its sizes are dynamic (specialize the model first)")
    return tuple(int(d) for d in dims), element


def _zero_filled(value) -> bool:
    owner = value.owner
    if getattr(owner, "name", "") != "linalg.fill":
        return False
    fill = owner.operands[0].owner
    return getattr(fill, "name", "") == "arith.constant" and \
        str(fill.attributes["value"]).split(":")[0].strip() in ("0.000000e+00", "0", "0.0")


def _loaded(value, dims: tuple[str, ...], role: str) -> Operand:
    """The Operand a whole-tensor load gives ``value``."""
    load = value.owner
    if getattr(load, "name", "") != _LOAD:
        raise NotAContraction(f"its {role} is computed in the dispatch "
                              f"({getattr(load, 'name', 'an argument')}), not loaded")
    return _operand(load.operands[0], load, dims, role)


def _operand(subspan_value, access, dims: tuple[str, ...], role: str) -> Operand:
    """Where ``subspan_value`` (a binding subspan) lies; ``access``: the load or store of it
    in whole (no dynamic or partial window)."""
    from iree.compiler import ir

    subspan = subspan_value.owner
    if getattr(subspan, "name", "") != _SUBSPAN:
        raise NotAContraction(f"its {role} is not read from a binding")
    shape, element = _shape(subspan.results[0].type)
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


def _epilogue(generic, result, loops: tuple[str, ...], resources: dict[str, str]):
    """(inputs, tables, expression, the value stored, the output's dims) of the elementwise
    op applied to the matmul's ``result``."""
    from iree.compiler import ir

    if "reduction" in str(generic.attributes["iterator_types"]):
        raise NotAContraction("the op after its matmul reduces, it is not elementwise")
    maps = [_map(str(m), loops) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    segments = list(ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"]))
    operands = list(generic.operands)
    ins, outs = operands[:segments[0]], operands[segments[0]:]
    if len(outs) != 1 or len(generic.results) != 1:
        raise NotAContraction("the op after its matmul has several results")
    leaves, inputs, tables = [], [], []
    for value, dims in zip(ins, maps):
        if value == result:
            if dims != loops:
                raise NotAContraction("the op after its matmul reads the result permuted")
            leaves.append(("acc",))
        elif getattr(value.owner, "name", "") == "arith.constant":
            leaves.append(_folded(value, dims, tables, resources))
        else:
            inputs.append(_loaded(value, dims, f"epilogue input {len(inputs)}"))
            leaves.append(("input", len(inputs) - 1))
    block = generic.regions[0].blocks[0]
    names = {str(arg.get_name()): leaf for arg, leaf in zip(block.arguments, leaves)}
    defined: dict[str, tuple] = {}
    yielded = None
    for op in block.operations:
        op = op.operation
        if op.name == "linalg.yield":
            yielded = _leaf(op.operands[0], names, defined)
            continue
        if op.name == "arith.constant":
            value = op.attributes["value"]
            try:
                number = ir.FloatAttr(value).value
            except (TypeError, ValueError):
                raise NotAContraction(f"its epilogue holds the constant {value}") from None
            defined[op.results[0].get_name()] = ("const", number, str(op.results[0].type))
            continue
        if op.name == "math.fpowi":
            node = _power(_leaf(op.operands[0], names, defined), _exponent(op.operands[1]),
                          str(op.results[0].type))
            if _depth(node) > DEEPEST:
                raise NotAContraction(f"its epilogue nests over {DEEPEST} deep")
            defined[op.results[0].get_name()] = node
            continue
        if op.name not in EPILOGUE_OPS:
            raise NotAContraction(f"its epilogue holds {op.name}, which the facts do not read")
        args = [_leaf(v, names, defined) for v in op.operands]
        if EPILOGUE_OPS[op.name] == "cast":
            args = [str(op.results[0].type), *args]
        elif EPILOGUE_OPS[op.name] == "cmp":
            args = [CMPF_PREDICATES[ir.IntegerAttr(op.attributes["predicate"]).value], *args]
        node = (EPILOGUE_OPS[op.name], *args)
        if _depth(node) > DEEPEST:
            raise NotAContraction(f"its epilogue nests over {DEEPEST} deep")
        defined[op.results[0].get_name()] = node
    if yielded is None:
        raise NotAContraction("its epilogue yields nothing")
    return tuple(inputs), tuple(tables), yielded, generic.results[0], maps[-1]


def _folded(value, dims: tuple[str, ...], tables: list, resources: dict[str, str]) -> tuple:
    """The leaf of a folded tensor the epilogue reads: a splat's value, or a new Table."""
    text, type_ = str(value.owner.attributes["value"]), str(value.type)
    shape, element = _shape(value.type)
    splat = re.fullmatch(r"dense<([-+\w.]+)> : .*", text)
    if splat:
        try:
            return ("const", float(splat.group(1)), element)
        except ValueError:
            raise NotAContraction(f"its epilogue reads the constant {text[:80]}") from None
    values = folded_elements(text.split(" : ")[0], type_, resources)
    if len(values) != _count(shape):
        raise NotAContraction(f"its epilogue reads a folded {type_} whose elements the facts "
                              "cannot read (over 65536 of them, or not in the program)")
    tables.append(Table(shape, element, dims, tuple(values)))
    return ("table", len(tables) - 1)


def _count(shape) -> int:
    count = 1
    for d in shape:
        count *= d
    return count


def _leaf(value, names: dict, defined: dict) -> tuple:
    from iree.compiler import ir

    name = value.get_name()
    if name in defined:
        return defined[name]
    if name in names:
        return names[name]
    constant = value.owner
    if getattr(constant, "name", "") == "arith.constant":
        try:
            return ("const", ir.FloatAttr(constant.attributes["value"]).value, str(value.type))
        except (TypeError, ValueError):
            pass
    raise NotAContraction(f"its epilogue reads {name} from outside it "
                          f"({getattr(constant, 'name', 'an argument')})")


def _exponent(value) -> int:
    """math.fpowi's exponent, where it is a constant of at most MAX_POWER."""
    from iree.compiler import ir

    constant = value.owner
    if getattr(constant, "name", "") == "arith.constant":
        try:
            exponent = ir.IntegerAttr(constant.attributes["value"]).value
        except (TypeError, ValueError):
            exponent = None
        if exponent is not None and abs(exponent) <= MAX_POWER:
            return exponent
    raise NotAContraction(f"its epilogue raises to a power that is not a constant of at most "
                          f"{MAX_POWER} ({value.get_name()})")


def _power(base: tuple, exponent: int, element: str) -> tuple:
    """``base`` to an integer power as products, as math.fpowi is expanded."""
    one = ("const", 1.0, element)
    if exponent == 0:
        return one
    product = base
    for _ in range(abs(exponent) - 1):
        product = ("mul", product, base)
    return product if exponent > 0 else ("div", one, product)


def _depth(tree) -> int:
    return 1 + max((_depth(t) for t in tree[1:] if isinstance(t, tuple)), default=0)


def _map(text: str, loops: tuple[str, ...]) -> tuple[str, ...]:
    """The loops an indexing map's results are, by name: ``(d0, d2)`` of (b, m, n) -> (b, n)."""
    found = _MAP_RE.search(text)
    if found is None:
        raise NotAContraction(f"the op after its matmul has the indexing map {text}")
    names = [d.strip() for d in found.group(1).split(",") if d.strip()]
    results = [r.strip() for r in found.group(2).split(",") if r.strip()]
    if len(names) != len(loops) or any(r not in names for r in results):
        raise NotAContraction(f"the op after its matmul has the indexing map {text}, which is "
                              "not a projection of its loops")
    return tuple(loops[names.index(r)] for r in results)


def _stored(value, dims: tuple[str, ...]) -> Operand:
    users = [use.owner for use in value.uses]
    if len(users) != 1 or users[0].name != _STORE:
        raise NotAContraction("its result is not stored once, whole")
    store = users[0]
    return _operand(store.operands[1], store, dims, "result")


def _tuples(value):
    """Lists read back from JSON, as the tuples the facts hold."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
