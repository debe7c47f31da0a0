"""What a family kernel sees of the GEMM executable it is compiled for: a C or CUDA header, or
the Triton entry a Triton kernel is compiled through.

A family kernel (``match``) includes ``iree_gemm.h``; the build writes one per
executable it takes, from that executable's facts (``ir.contractions``): the
sizes (``GEMM_M``, ...), the element types, the parameter list IREE passes
(``GEMM_PARAMS``), an element of each operand wherever its binding and byte
offset put it (``GEMM_LHS(b, m, k)``, ``GEMM_RHS(b, k, n)``), and the store of
a result with the executable's epilogue applied (``GEMM_STORE(b, m, n, acc)``).
The kernel is written once against these names; transposes, offsets from push
constants, biases and activations are the header's.

A Triton family kernel is a ``@triton.jit`` function computing one tile
(``gemm(lhs, rhs, M, N, K, stride_lm, stride_lk, stride_rk, stride_rn,
**constexprs) -> (acc, offs_m, offs_n)``, lhs and rhs already at the batch);
``triton_entry`` writes, per executable, the entry with IREE's signature that
calls it and applies the epilogue before the store. Not for the facts themselves.
"""
from __future__ import annotations

import math

from iree_kernels.core.render import render
from iree_kernels.ir.contractions import Contraction, Operand

HEADER = "iree_gemm.h"
TRITON_ENTRY = "entry.py"           # its @triton.jit function: "entry"
_TRITON_TYPES = {"f32": "tl.float32", "f16": "tl.float16", "bf16": "tl.bfloat16",
                 "f64": "tl.float64"}
_TRITON_CALLS = {"erf": "tl.erf", "exp": "tl.exp", "sqrt": "tl.sqrt", "rsqrt": "tl.rsqrt",
                 "abs": "tl.abs", "max": "tl.maximum", "min": "tl.minimum"}
_C_TYPES = {"f32": "float", "f64": "double", "f16": "_Float16", "bf16": "__bf16",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t"}
_BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
_CALLS = {"erf": "gemm_erf", "exp": "gemm_exp", "tanh": "gemm_tanh", "sqrt": "gemm_sqrt",
          "abs": "gemm_abs", "max": "gemm_max", "min": "gemm_min"}
_OFFSET_OPS = {"arith.addi": "+", "arith.subi": "-", "arith.muli": "*", "arith.shli": "<<",
               "arith.shrui": ">>", "arith.ori": "|", "arith.andi": "&", "arith.xori": "^",
               "arith.divui": "/", "arith.remui": "%"}


class Unsupported(ValueError):
    """The facts hold what the header cannot say in C: one sentence."""


def header(facts: Contraction, *, executable: str, export: str, model: str, target: str,
           cuda: bool) -> str:
    """``iree_gemm.h`` for one executable; Unsupported where its facts cannot be written."""
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
                  epilogue=_epilogue(facts.epilogue, facts))


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
    return f"({a} {_OFFSET_OPS[kind]} {b})"


def _epilogue(tree, facts: Contraction) -> str:
    """The C expression of an epilogue tree over ``acc`` (ir.contractions' format)."""
    kind = tree[0]
    if kind == "acc":
        return "(acc)"
    if kind == "input":
        return f"GEMM_INPUT{tree[1]}(b, m, n)"
    if kind == "table":
        table = facts.tables[tree[1]]
        index = f"({table.dims[0]})"
        for size, dim in zip(table.shape[1:], table.dims[1:]):
            index = f"({index} * {size} + ({dim}))"
        return f"gemm_table{tree[1]}[{index}]"
    if kind == "const":
        return _literal(tree[1], tree[2])
    if kind == "cast":
        return f"(({_c_type(tree[1])}){_epilogue(tree[2], facts)})"
    args = [_epilogue(t, facts) for t in tree[1:]]
    if kind in _BINARY:
        return f"({args[0]} {_BINARY[kind]} {args[1]})"
    if kind == "neg":
        return f"(-{args[0]})"
    if kind == "rsqrt":
        return f"(1.0f / gemm_sqrt({args[0]}))"
    if kind in _CALLS:
        return f"{_CALLS[kind]}({', '.join(args)})"
    raise Unsupported(f"its epilogue applies {kind}, which the header cannot write in C")


def _literal(value: float, element: str) -> str:
    if math.isnan(value):
        return "__builtin_nanf(\"\")"
    if math.isinf(value):
        return ("-" if value < 0 else "") + "__builtin_inff()"
    if element.startswith("i"):
        return str(int(value))
    return repr(float(value)) + ("f" if element != "f64" else "")


def triton_decline(facts: Contraction) -> str:
    """Why a Triton family cannot take an executable, or ''."""
    if facts.tables:
        return "its epilogue reads a folded table, which a Triton entry cannot hold"
    elements = {facts.lhs.element, facts.rhs.element}
    if not elements <= set(_TRITON_TYPES) or facts.out.element not in _TRITON_TYPES:
        return f"its element types ({', '.join(sorted(elements))}) are not Triton floats here"
    held: dict[int, str] = {}
    for operand in (facts.lhs, facts.rhs, facts.out, *facts.inputs):
        if held.setdefault(operand.binding, operand.element) != operand.element:
            return f"its binding {operand.binding} holds tensors of two element types"
    return ""


def triton_entry(facts: Contraction, *, executable: str, export: str, model: str,
                 target: str, kernel: str, function: str, constexprs: list[str]) -> str:
    """The Triton entry of one executable (see the module's docstring); Unsupported where
    ``triton_decline`` says why."""
    why = triton_decline(facts)
    if why:
        raise Unsupported(why)
    params = [f"binding{i}" for i in range(facts.bindings)] + \
             [f"constant{i}" for i in range(facts.constants)] + \
             [f"{name}: tl.constexpr" for name in constexprs]
    lhs_strides, rhs_strides = _strides(facts.lhs), _strides(facts.rhs)
    return render("families/triton_entry.py.j2", executable=executable, export=export,
                  model=model, target=target, described=facts.describe(), facts=facts,
                  kernel=kernel, function=function, params=params, constexprs=constexprs,
                  lhs=_triton_pointer(facts.lhs, ("b",)), rhs=_triton_pointer(facts.rhs, ("b",)),
                  strides=[lhs_strides.get("m", 0), lhs_strides.get("k", 0),
                           rhs_strides.get("k", 0), rhs_strides.get("n", 0)],
                  inputs=[_triton_pointer(i, ("b", "m", "n")) for i in facts.inputs],
                  out=_triton_pointer(facts.out, ("b", "m", "n")),
                  out_type=_TRITON_TYPES[facts.out.element],
                  epilogue=_triton_epilogue(facts.epilogue))


def _strides(operand: Operand) -> dict[str, int]:
    """Elements between neighbours along each loop the operand's dims name (row-major)."""
    strides, step = {}, 1
    for size, dim in zip(reversed(operand.shape), reversed(operand.dims)):
        strides[dim] = step
        step *= size
    return strides


def _triton_pointer(operand: Operand, loops: tuple[str, ...]) -> str:
    """The operand's binding, at its offset, moved along ``loops`` (those it has)."""
    size = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2}[operand.element]
    base = f"binding{operand.binding}"
    if isinstance(operand.offset, int):
        if operand.offset % size:
            raise Unsupported(f"binding {operand.binding}'s tensor starts at byte "
                              f"{operand.offset}, not at a whole {operand.element}")
        if operand.offset:
            base += f" + {operand.offset // size}"
    else:
        base += f" + ({_triton_offset(operand.offset)}) // {size}"
    strides = _strides(operand)
    return " + ".join([base, *(f"{dim} * {strides[dim]}" for dim in loops if dim in strides)])


def _triton_offset(offset) -> str:
    kind = offset[0]
    if kind == "constant":
        return str(offset[1])
    if kind == "push":
        return f"constant{offset[1]}.to(tl.int64)"
    a, b = (_triton_offset(o) for o in offset[1:])
    return f"({a} {_OFFSET_OPS[kind].replace('/', '//')} {b})"


def _triton_epilogue(tree) -> str:
    kind = tree[0]
    if kind == "acc":
        return "acc"
    if kind == "input":
        return f"input{tree[1]}"
    if kind == "const":
        return repr(float(tree[1]))
    if kind == "cast":
        if tree[1] not in _TRITON_TYPES:
            raise Unsupported(f"its epilogue casts to {tree[1]}")
        return f"({_triton_epilogue(tree[2])}).to({_TRITON_TYPES[tree[1]]})"
    args = [_triton_epilogue(t) for t in tree[1:]]
    if kind in _BINARY:
        return f"({args[0]} {_BINARY[kind]} {args[1]})"
    if kind == "neg":
        return f"(-{args[0]})"
    if kind == "tanh":
        return f"(2.0 * tl.sigmoid(2.0 * {args[0]}) - 1.0)"
    if kind in _TRITON_CALLS:
        return f"{_TRITON_CALLS[kind]}({', '.join(args)})"
    raise Unsupported(f"its epilogue applies {kind}, which the Triton entry cannot write")
