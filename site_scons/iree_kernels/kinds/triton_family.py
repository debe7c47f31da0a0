"""A Triton family kernel's entry: the ``@triton.jit`` function with IREE's signature that one
executable's instance is compiled through.

A Triton family kernel (``match``) is a ``@triton.jit`` function computing one
tile: ``gemm(lhs, rhs, M, N, K, stride_lm, stride_lk, stride_rk, stride_rn,
**constexprs) -> (acc, offs_m, offs_n)``, the tile's f32 sums and its rows and
columns, lhs and rhs already at the program's batch (``tl.program_id(1)``).
``entry`` writes, from one executable's facts (``ir.contractions``), the entry that
finds the operands, calls it, applies the epilogue and stores; ``decline`` says
which executables it cannot take. Not for compiling it (``triton_kernels``).
"""
from __future__ import annotations

import math

from iree_kernels.core.render import render
from iree_kernels.ir.gemm_facts import Contraction, Operand
from iree_kernels.kinds.epilogue_spelling import Spelling, Unsupported, spell
from iree_kernels.kinds.gemm_interface import OFFSET_OPS, checked_names

FUNCTION = "entry"                  # the entry's @triton.jit function
_TYPES = {"f32": "tl.float32", "f16": "tl.float16", "bf16": "tl.bfloat16", "f64": "tl.float64"}
_CALLS = {"erf": "tl.erf", "exp": "tl.exp", "sqrt": "tl.sqrt", "rsqrt": "tl.rsqrt",
          "abs": "tl.abs", "max": "tl.maximum", "min": "tl.minimum"}


def decline(facts: Contraction) -> str:
    """Why a Triton family cannot take an executable, or ''."""
    if facts.tables:
        return "its epilogue reads a folded table, which a Triton entry cannot hold"
    elements = {facts.lhs.element, facts.rhs.element}
    if not elements <= set(_TYPES) or facts.out.element not in _TYPES:
        return f"its element types ({', '.join(sorted(elements))}) are not Triton floats here"
    if any(not math.isfinite(c) for c in _constants(facts.epilogue)):
        return "its epilogue holds a constant that is not finite, which the entry cannot write"
    held: dict[int, str] = {}
    for operand in (facts.lhs, facts.rhs, facts.out, *facts.inputs):
        if held.setdefault(operand.binding, operand.element) != operand.element:
            return f"its binding {operand.binding} holds tensors of two element types"
    return ""


def entry(facts: Contraction, *, executable: str, export: str, model: str,
                 target: str, kernel: str, function: str, constexprs: list[str]) -> str:
    """The Triton entry of one executable (see the module's docstring); Unsupported where
    ``decline`` says why."""
    why = decline(facts)
    if why:
        raise Unsupported(why)
    checked_names(executable, export, model, function, *constexprs)
    params = [f"binding{i}" for i in range(facts.bindings)] + \
             [f"constant{i}" for i in range(facts.constants)] + \
             [f"{name}: tl.constexpr" for name in constexprs]
    lhs_strides, rhs_strides = _strides(facts.lhs), _strides(facts.rhs)
    return render("families/triton_entry.py.j2", executable=executable, export=export,
                  model=model, target=target, described=facts.describe(), facts=facts,
                  kernel=kernel, function=function, params=params, constexprs=constexprs,
                  lhs=_pointer(facts.lhs, ("b",)), rhs=_pointer(facts.rhs, ("b",)),
                  strides=[lhs_strides.get("m", 0), lhs_strides.get("k", 0),
                           rhs_strides.get("k", 0), rhs_strides.get("n", 0)],
                  inputs=[_pointer(i, ("b", "m", "n")) for i in facts.inputs],
                  out=_pointer(facts.out, ("b", "m", "n")),
                  out_type=_TYPES[facts.out.element],
                  epilogue=spell(facts.epilogue, _SPELLING))


def _constants(tree):
    if tree[0] == "const":
        yield float(tree[1])
    for child in tree[1:]:
        if isinstance(child, tuple):
            yield from _constants(child)


def _strides(operand: Operand) -> dict[str, int]:
    """Elements between neighbours along each loop the operand's dims name (row-major)."""
    strides, step = {}, 1
    for size, dim in zip(reversed(operand.shape), reversed(operand.dims)):
        strides[dim] = step
        step *= size
    return strides


def _pointer(operand: Operand, loops: tuple[str, ...]) -> str:
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
        base += f" + ({_offset(operand.offset)}) // {size}"
    strides = _strides(operand)
    return " + ".join([base, *(f"{dim} * {strides[dim]}" for dim in loops if dim in strides)])


def _offset(offset) -> str:
    kind = offset[0]
    if kind == "constant":
        return str(offset[1])
    if kind == "push":
        return f"constant{offset[1]}.to(tl.int64)"
    a, b = (_offset(o) for o in offset[1:])
    return f"({a} {OFFSET_OPS[kind].replace('/', '//')} {b})"


def _cast(element: str, x: str) -> str:
    if element not in _TYPES:
        raise Unsupported(f"its epilogue casts to {element}")
    return f"({x}).to({_TYPES[element]})"


_SPELLING = Spelling(language="the Triton entry", leaf=lambda tree: "".join(map(str, tree)),
                     literal=lambda value, element: repr(float(value)), cast=_cast,
                     calls=_CALLS, select="tl.where({0}, {1}, {2})", negation="(~",
                     forms={"neg": "(-{0})", "tanh": "(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)"})
