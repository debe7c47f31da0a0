"""The elementwise op IREE fuses after a matmul, read as an expression tree of its result.

The tree (``Contraction.epilogue``'s format) names the matmul's sum ``acc``, the
tensors the op loads ``input``, the tensors folded into the executable ``table``,
and scalars ``const``; the ops are ``EPILOGUE_OPS``' names. A power by a constant
integer (``math.fpowi``) is read as its products. An op the tree has no name for
declines the executable, in a sentence.

Not for: writing the tree in a kernel language (``kinds.epilogue_spelling``).
"""
from __future__ import annotations

import re

from iree_kernels.ir.dispatch_body import folded_elements
from iree_kernels.ir.gemm_facts import NotAContraction, Operand, Table, loaded_operand, \
    map_dims, tensor_shape

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
DEEPEST = 64                    # epilogue expression nesting
MAX_POWER = 8                   # math.fpowi's exponent, written as products


def read_epilogue(generic, result, loops: tuple[str, ...], resources: dict[str, str]
                  ) -> tuple[tuple[Operand, ...], tuple[Table, ...], tuple, object, tuple[str, ...]]:
    """(inputs, tables, expression, the value stored, the output's dims) of the elementwise
    op applied to the matmul's ``result``."""
    from iree.compiler import ir

    if "reduction" in str(generic.attributes["iterator_types"]):
        raise NotAContraction("the op after its matmul reduces, it is not elementwise")
    maps = [map_dims(str(m), loops) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
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
            inputs.append(loaded_operand(value, dims, f"epilogue input {len(inputs)}"))
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
        elif op.name in EPILOGUE_OPS:
            args = [_leaf(v, names, defined) for v in op.operands]
            if EPILOGUE_OPS[op.name] == "cast":
                args = [str(op.results[0].type), *args]
            elif EPILOGUE_OPS[op.name] == "cmp":
                args = [CMPF_PREDICATES[ir.IntegerAttr(op.attributes["predicate"]).value], *args]
            node = (EPILOGUE_OPS[op.name], *args)
        else:
            raise NotAContraction(f"its epilogue holds {op.name}, which the facts do not read")
        if _depth(node) > DEEPEST:
            raise NotAContraction(f"its epilogue nests over {DEEPEST} deep")
        defined[op.results[0].get_name()] = node
    if yielded is None:
        raise NotAContraction("its epilogue yields nothing")
    return tuple(inputs), tuple(tables), yielded, generic.results[0], maps[-1]


def _folded(value, dims: tuple[str, ...], tables: list, resources: dict[str, str]) -> tuple:
    """The leaf of a folded tensor the epilogue reads: a splat's value, or a new Table."""
    text, type_ = str(value.owner.attributes["value"]), str(value.type)
    shape, element = tensor_shape(value.type)
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
