"""Workgroup counts written as small expressions of an executable's workload.

A wrapped substitution states its launch shape: ``workgroup_count`` is up to
three expressions over the workload values IREE passes to the export's count
region (``w0``, ``w1``, ...) and integers, with ``+ - * //``, ``ceildiv(a, b)``,
``min(a, b)`` and ``max(a, b)``. This module checks them and turns them into
the ``arith`` ops of the count region. It does not render whole executables.

A divisor must be positive whatever the workload: workload values can be 0,
and a division by zero in a count region kills the program at run time
(SIGFPE). Each value's bounds are tracked (workload values: 0 to unbounded)
and a divisor whose lower bound is 0 is refused: ``w0 // max(w1, 1)`` passes.
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

_BINARY = {ast.Add: "arith.addi", ast.Sub: "arith.subi", ast.Mult: "arith.muli",
           ast.FloorDiv: "arith.divui"}
_CALLS = {"ceildiv": "arith.ceildivui", "min": "arith.minui", "max": "arith.maxui"}
SYNTAX = "integers, w0, w1, ..., + - * //, ceildiv(a, b), min(a, b), max(a, b)"
LONGEST = 1000              # characters of one expression
COUNT_LIMIT = 2 ** 32       # a workgroup count is a 32-bit value


class ExpressionError(ValueError):
    """What is wrong with one expression, for the caller to place in the manifest."""


@dataclass
class CountRegion:
    """The body of a count region: ops, then the three values it returns."""
    workload: int | None          # None: any w<N> is accepted (a syntax check only)
    ops: list[str] = field(default_factory=list)
    constants: dict[int, str] = field(default_factory=dict)
    results: list[str] = field(default_factory=list)
    # (lowest, highest or None: unbounded) of each value, for the division check
    bounds: dict[str, tuple[int, int | None]] = field(default_factory=dict)

    def constant(self, value: int) -> str:
        if value not in self.constants:
            self.constants[value] = f"%c{value}"
            self.ops.append(f"%c{value} = arith.constant {value} : index")
            self.bounds[self.constants[value]] = (value, value)
        return self.constants[value]

    def value(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant) and type(node.value) is int and node.value >= 0:
            if node.value >= COUNT_LIMIT:
                raise ExpressionError(f"'{node.value}' is 2^32 or more; a workgroup count is a "
                                      "32-bit value")
            return self.constant(node.value)
        if isinstance(node, ast.Name):
            return self._workload(node.id)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return self._op(_BINARY[type(node.op)], node.left, node.right, node)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in _CALLS and len(node.args) == 2 and not node.keywords:
            return self._op(_CALLS[node.func.id], *node.args, node)
        raise ExpressionError(f"'{ast.unparse(node)}' is not allowed; use {SYNTAX}")

    def _workload(self, name: str) -> str:
        self.bounds[f"%{name}"] = (0, None)
        if self.workload is None:
            if re.fullmatch(r"w\d+", name):
                return f"%{name}"
            raise ExpressionError(f"unknown name '{name}'; the workload values are named "
                                  "w0, w1, ...")
        names = [f"w{i}" for i in range(self.workload or 0)]
        if name not in names:
            known = ", ".join(names) if names else "none: this executable's count is constant"
            raise ExpressionError(f"unknown name '{name}'; the workload values are {known}")
        return f"%{name}"

    def _op(self, op: str, left: ast.AST, right: ast.AST, node: ast.AST) -> str:
        a, b = self.value(left), self.value(right)
        if op in ("arith.divui", "arith.ceildivui") and self.bounds[b][0] == 0:
            divisor = ast.unparse(right)
            why = ("which is zero; divide by a positive integer" if self.bounds[b] == (0, 0) else
                   "which can be zero (a workload value can be 0); divide by a positive "
                   f"integer or by max({divisor}, 1)")
            raise ExpressionError(f"'{ast.unparse(node)}' divides by '{divisor}', {why}")
        result = f"%v{len(self.ops)}"
        self.ops.append(f"{result} = {op} {a}, {b} : index")
        self.bounds[result] = _bounds(op, self.bounds[a], self.bounds[b])
        low, high = self.bounds[result]
        if high is not None and high < 0:
            raise ExpressionError(f"'{ast.unparse(node)}' is negative ({high}); a workgroup "
                                  "count wraps to 2^64 - 1 and more")
        return result


def _bounds(op: str, a: tuple[int, int | None], b: tuple[int, int | None]) -> tuple[int, int | None]:
    """The bounds of ``op`` applied to values within bounds ``a`` and ``b`` (index arithmetic)."""
    (la, ua), (lb, ub) = a, b
    both = ua is not None and ub is not None
    if op == "arith.addi":
        return la + lb, ua + ub if both else None
    if op == "arith.subi":          # unsigned: may wrap, so nothing is known of its lower bound
        return (la - lb, la - lb) if (la, lb) == (ua, ub) else (0, None)  # but of constants
    if op == "arith.muli":
        return la * lb, ua * ub if both else None
    if op == "arith.divui":
        return (la // ub if ub else 0), (ua // lb if ua is not None and lb else None)
    if op == "arith.ceildivui":
        low = -(-la // ub) if ub else (1 if la > 0 else 0)
        return low, (-(-ua // lb) if ua is not None and lb else None)
    if op == "arith.minui":
        return min(la, lb), (min(u for u in (ua, ub) if u is not None) if ua is not None or ub is not None else None)
    return max(la, lb), max(ua, ub) if both else None


def count_region(expressions, workload: int | None) -> CountRegion:
    """Check ``expressions`` (1 to 3; ints or strings) and build their count region."""
    if not isinstance(expressions, (list, tuple)) or not 1 <= len(expressions) <= 3:
        if not isinstance(expressions, (list, tuple)):
            raise ExpressionError("expected a list of 1 to 3 expressions (x, y, z)")
        raise ExpressionError(f"expected 1 to 3 expressions (x, y, z), found {len(expressions)}")
    region = CountRegion(workload)
    for expression in expressions:
        result = region.value(_parse(expression))
        low, high = region.bounds[result]
        if high == 0:
            raise ExpressionError(f"'{expression}' is 0: it launches no workgroups")
        if low >= COUNT_LIMIT:
            raise ExpressionError(f"'{expression}' is {low}, 2^32 or more; a workgroup count "
                                  "is a 32-bit value")
        region.results.append(result)
    while len(region.results) < 3:
        region.results.append(region.constant(1))
    return region


# A family's workgroup_count may name the loop sizes of each executable it takes.
SIZE_NAMES = ("batch", "m", "n", "k")


def with_sizes(expression, sizes: dict[str, int]) -> str:
    """``expression`` with each of ``sizes``' names written as its value:
    ``ceildiv(n, 64)`` with n = 512 is ``ceildiv(512, 64)``."""
    class Sizes(ast.NodeTransformer):
        def visit_Name(self, node):
            return ast.Constant(sizes[node.id]) if node.id in sizes else node
    return ast.unparse(Sizes().visit(_parse(expression)))


def _parse(expression) -> ast.AST:
    if type(expression) is int:
        expression = str(expression)
    if not isinstance(expression, str):
        raise ExpressionError(f"{expression!r} is neither an integer nor an expression string")
    if len(expression) > LONGEST:
        raise ExpressionError(f"'{expression[:40]}...' is {len(expression)} characters long; "
                              f"an expression may be {LONGEST}")
    try:
        return ast.parse(expression, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError):    # '(' * 500 nests too deep to parse
        raise ExpressionError(f"'{expression}' is not an expression; use {SYNTAX}") from None


_INDEX = 1 << 64        # index arithmetic wraps here (unsigned, 64 bits on every target)
_EVALUATE = {ast.Add: lambda a, b: (a + b) % _INDEX, ast.Sub: lambda a, b: (a - b) % _INDEX,
             ast.Mult: lambda a, b: (a * b) % _INDEX, ast.FloorDiv: lambda a, b: a // b}
_EVALUATE_CALLS = {"ceildiv": lambda a, b: -(-a // b), "min": min, "max": max}


def evaluate(expressions, workload: tuple[int, ...]) -> list[int]:
    """What the count region of ``expressions`` (checked by ``count_region``) returns for
    ``workload``: three counts, as the device computes them (unsigned index arithmetic)."""
    def value(node):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return workload[int(node.id[1:])]
        if isinstance(node, ast.BinOp):
            return _EVALUATE[type(node.op)](value(node.left), value(node.right))
        return _EVALUATE_CALLS[node.func.id](value(node.args[0]), value(node.args[1]))
    counts = [value(_parse(e)) for e in expressions]
    return counts + [1] * (3 - len(counts))
