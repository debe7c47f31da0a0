"""An epilogue tree (``ir.contractions``' format) written as an expression of a kernel language.

The walk is one; what differs between kernel languages is a ``Spelling``: how
leaves, literals, casts, calls and selects are written. Not for the facts
themselves, nor for the files the expressions go into (the family interfaces).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

BINARY = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
# arith.cmpf's predicates: the ordered ones are false where an operand is NaN, as
# the kernel languages' <, <=, >, >=, == are; the unordered ones are true there, as != is.
COMPARISONS = {
    "oeq": "({0} == {1})", "ogt": "({0} > {1})", "oge": "({0} >= {1})", "olt": "({0} < {1})",
    "ole": "({0} <= {1})", "one": "(({0} < {1}) | ({0} > {1}))",
    "ord": "(({0} == {0}) & ({1} == {1}))", "une": "({0} != {1})",
    "ueq": "{not}(({0} < {1}) | ({0} > {1})))", "ugt": "{not}({0} <= {1}))",
    "uge": "{not}({0} < {1}))", "ult": "{not}({0} >= {1}))", "ule": "{not}({0} > {1}))",
    "uno": "(({0} != {0}) | ({1} != {1}))",
}


class Unsupported(ValueError):
    """The facts hold what a language's spelling cannot write: one sentence."""


@dataclass(frozen=True)
class Spelling:
    """How one language writes an epilogue: ``leaf`` for acc, inputs and tables."""
    language: str                           # for messages: "C"
    leaf: Callable[[tuple], str]
    literal: Callable[[float, str], str]    # (value, element type)
    cast: Callable[[str, str], str]         # (element type, expression)
    calls: dict[str, str]                   # op -> the function applied to its arguments
    select: str                             # over {0} the condition, {1} and {2}
    negation: str                           # "(!" or "(~": what {not} opens in COMPARISONS
    forms: dict[str, str] = field(default_factory=dict)   # op -> a format over its arguments


def spell(tree, spelling: Spelling) -> str:
    """The expression of ``tree`` in ``spelling``'s language; Unsupported where it has none."""
    kind = tree[0]
    if kind in ("acc", "input", "table"):
        return spelling.leaf(tree)
    if kind == "const":
        return spelling.literal(tree[1], tree[2])
    if kind == "cast":
        return spelling.cast(tree[1], spell(tree[2], spelling))
    if kind == "cmp":
        if tree[1] not in COMPARISONS:
            raise Unsupported(f"its epilogue compares with the predicate {tree[1]}")
        a, b = (spell(t, spelling) for t in tree[2:])
        return COMPARISONS[tree[1]].format(a, b, **{"not": spelling.negation})
    args = [spell(t, spelling) for t in tree[1:]]
    if kind == "select":
        return spelling.select.format(*args)
    if kind in BINARY:
        return f"({args[0]} {BINARY[kind]} {args[1]})"
    if kind in spelling.forms:
        return spelling.forms[kind].format(*args)
    if kind in spelling.calls:
        return f"{spelling.calls[kind]}({', '.join(args)})"
    raise Unsupported(f"its epilogue applies {kind}, which {spelling.language} cannot write here")
