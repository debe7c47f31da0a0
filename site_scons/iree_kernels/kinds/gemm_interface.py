"""What a C or CUDA family kernel sees of the GEMM executable it is compiled for: one header.

A family kernel (``match``) includes ``iree_gemm.h``; the build writes one per
executable it takes, from that executable's facts (``ir.contractions``): the
sizes (``GEMM_M``, ...), the element types, the parameter list IREE passes
(``GEMM_PARAMS``), an element of each operand wherever its binding and byte
offset put it (``GEMM_LHS(b, m, k)``, ``GEMM_RHS(b, k, n)``), and the store of
a result with the executable's epilogue applied (``GEMM_STORE(b, m, n, acc)``).
The kernel is written once against these names; transposes, offsets from push
constants, biases and activations are the header's. Not for the facts
themselves, nor for the other languages' family interfaces (beside their kinds).
"""
from __future__ import annotations

import math
import re

from iree_kernels.core.render import render
from iree_kernels.ir.gemm_facts import Contraction, Operand
from iree_kernels.kinds.epilogue_spelling import Spelling, Unsupported, spell

HEADER = "iree_gemm.h"

_C_TYPES = {"f32": "float", "f64": "double", "f16": "_Float16", "bf16": "__bf16",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t"}
_CALLS = {"erf": "gemm_erf", "exp": "gemm_exp", "tanh": "gemm_tanh", "sqrt": "gemm_sqrt",
          "abs": "gemm_abs", "max": "gemm_max", "min": "gemm_min"}
OFFSET_OPS = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.shli": "<<",
               "arith.shrui": ">>", "arith.ori": "|", "arith.andi": "&", "arith.xori": "^",
               "arith.divui": "/", "arith.remui": "%"}


# What a name written into generated code may be: an MLIR symbol can be any quoted string,
# and one holding a newline would write code of its own into the file.
SYMBOL_RE = re.compile(r"^[A-Za-z_$][\w$.-]{0,254}$")


def checked_names(*names: str) -> None:
    """Unsupported where a model's name could not go into generated code as it is."""
    for name in names:
        if not SYMBOL_RE.fullmatch(name):
            raise Unsupported(f"the name {name[:60]!r} is not a plain symbol (letters, digits, "
                              "_ $ . -): it cannot be written into a generated file")


def header(facts: Contraction, *, executable: str, export: str, model: str, target: str,
           cuda: bool) -> str:
    """``iree_gemm.h`` for one executable; Unsupported where its facts cannot be written."""
    checked_names(executable, export, model)
    size_t = "unsigned long long" if cuda else "size_t"
    word = "unsigned int" if cuda else "uint32_t"
    params = [f"char *binding{i}" for i in range(facts.bindings)] + \
             [f"{word} constant{i}" for i in range(facts.constants)]
    if not cuda:
        params += [f"size_t workgroup_{what}_{axis}" for what in ("id", "count")
                   for axis in "xyz"]
    types = {"lhs": _c_type(facts.lhs.element), "rhs": _c_type(facts.rhs.element),
             "acc": _c_type(facts.accumulator), "out": _c_type(facts.out.element)}
    tables = [{"type": _c_type(t.element),
               "elements": [_literal(v, t.element) for v in t.values]} for t in facts.tables]
    return render("families/gemm.h.j2", executable=executable, export=export, model=model,
                  target=target, described=facts.describe(), facts=facts, cuda=cuda,
                  types=types, params=params,
                  lhs=_element(facts.lhs, "const gemm_lhs_t", size_t),
                  rhs=_element(facts.rhs, "const gemm_rhs_t", size_t),
                  inputs=[_element(i, f"const {_c_type(i.element)}", size_t)
                          for i in facts.inputs],
                  tables=tables, out=_element(facts.out, "gemm_out_t", size_t),
                  epilogue=spell(facts.epilogue, _spelling(facts)))


def _c_type(element: str) -> str:
    if element not in _C_TYPES:
        raise Unsupported(f"its element type {element} has no C type here")
    return _C_TYPES[element]


def _element(operand: Operand, pointee: str, size_t: str) -> str:
    """The C lvalue of one element of ``operand`` at the loop indices its dims name."""
    index = f"({operand.dims[0]})"
    for size, dim in zip(operand.shape[1:], operand.dims[1:]):
        index = f"({index} * {size} + ({dim}))"
    base = f"binding{operand.binding}"
    if operand.offset != 0:
        base = f"({base} + {_offset(operand.offset, size_t)})"
    return f"((({pointee} *){base})[{index}])"


def _offset(offset, size_t: str) -> str:
    """A byte offset: a number, or how it is computed from the push constants."""
    if isinstance(offset, int):
        return f"{offset}ull"
    kind = offset[0]
    if kind == "constant":
        return f"{offset[1]}ull"
    if kind == "push":
        return f"(({size_t})constant{offset[1]})"
    a, b = (_offset(o, size_t) for o in offset[1:])
    return f"({a} {OFFSET_OPS[kind]} {b})"


def _spelling(facts: Contraction) -> Spelling:
    """C's (and CUDA's) epilogue spelling over ``acc``, the header's inputs and tables."""
    def leaf(tree) -> str:
        if tree[0] == "acc":
            return "(acc)"
        if tree[0] == "input":
            return f"GEMM_INPUT{tree[1]}(b, m, n)"
        table = facts.tables[tree[1]]
        index = f"({table.dims[0]})"
        for size, dim in zip(table.shape[1:], table.dims[1:]):
            index = f"({index} * {size} + ({dim}))"
        return f"gemm_table{tree[1]}[{index}]"

    return Spelling(language="C", leaf=leaf, literal=_literal,
                    cast=lambda element, x: f"(({_c_type(element)}){x})", calls=_CALLS,
                    select="({0} ? {1} : {2})", negation="(!",
                    forms={"neg": "(-{0})", "rsqrt": "(1.0f / gemm_sqrt({0}))"})


def _literal(value: float, element: str) -> str:
    if math.isnan(value):
        return "__builtin_nanf(\"\")"
    if math.isinf(value):
        return ("-" if value < 0 else "") + "__builtin_inff()"
    if element.startswith("i"):
        return str(int(value))
    return repr(float(value)) + ("f" if element != "f64" else "")

