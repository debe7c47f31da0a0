"""An epilogue's comparisons keep arith.cmpf's meaning where an operand is NaN, in every language.

arith.cmpf's ordered predicates are false where an operand is NaN, its unordered
ones true; ReLU arrives from torch as ``select(cmpf ugt (x, 0), x, 0)``. Each
predicate is spelled, then evaluated on NaN and on numbers: in Python (the
table's formulas) and compiled as C (the family header's spelling).
"""
from __future__ import annotations

import itertools
import math
import operator
import shutil
import subprocess

import pytest

from iree_kernels.kinds import gemm_interface
from iree_kernels.kinds.epilogue_spelling import COMPARISONS, Spelling, Unsupported, spell

VALUES = (1.0, 2.0, math.nan)
ORDERED = {"eq": operator.eq, "gt": operator.gt, "ge": operator.ge, "lt": operator.lt,
           "le": operator.le, "ne": operator.ne, "rd": lambda a, b: True}


def meaning(predicate: str, a: float, b: float) -> bool:
    """arith.cmpf's definition: o* false on NaN, u* true on NaN, else the comparison."""
    if math.isnan(a) or math.isnan(b):
        return predicate[0] == "u" and predicate != "uno" or predicate == "uno"
    if predicate == "uno":
        return False
    return ORDERED[predicate[1:]](a, b)


def chosen(predicate: str) -> tuple:
    """select(cmp(acc, input0), 1.0, 0.0)"""
    return ("select", ("cmp", predicate, ("acc",), ("input", 0)),
            ("const", 1.0, "f32"), ("const", 0.0, "f32"))


PYTHON = Spelling(language="Python", leaf=lambda tree: "a" if tree[0] == "acc" else "b",
                  literal=lambda value, element: repr(value), cast=lambda element, x: x,
                  calls={}, select="({1} if {0} else {2})", negation="(not ")


@pytest.mark.parametrize("predicate", sorted(COMPARISONS))
def test_each_predicate_spelled_in_python_means_what_cmpf_means(predicate):
    expression = spell(chosen(predicate), PYTHON)
    for a, b in itertools.product(VALUES, repeat=2):
        assert eval(expression, {"a": a, "b": b}) == float(meaning(predicate, a, b)), (a, b)


@pytest.mark.skipif(not shutil.which("clang"), reason="no clang")
def test_each_predicate_spelled_in_c_means_what_cmpf_means(tmp_path):
    c = gemm_interface._spelling(None)
    cases = list(itertools.product(VALUES, repeat=2))
    lines = ["#include <math.h>", "#include <stdio.h>", "#define GEMM_INPUT0(b, m, n) y",
             "static const float xs[] = {" + ", ".join("NAN" if math.isnan(a) else repr(a)
                                                      for a, _ in cases) + "};",
             "static const float ys[] = {" + ", ".join("NAN" if math.isnan(b) else repr(b)
                                                      for _, b in cases) + "};",
             "int main(void) {", f"  for (int i = 0; i < {len(cases)}; ++i) {{",
             "    float acc = xs[i], y = ys[i];", "    int b = 0, m = 0, n = 0; (void)b; (void)m;"
             " (void)n;"]
    lines += [f'    printf("%g ", (double){spell(chosen(p), c)});' for p in sorted(COMPARISONS)]
    lines += ['    printf("\\n");', "  }", "  return 0;", "}"]
    (tmp_path / "cmp.c").write_text("\n".join(lines))
    subprocess.run(["clang", "-O2", "-Werror", "-Wno-unused-value", str(tmp_path / "cmp.c"),
                    "-o", str(tmp_path / "cmp")], check=True, timeout=60)
    printed = subprocess.run([str(tmp_path / "cmp")], capture_output=True, text=True, check=True,
                             timeout=60).stdout.splitlines()
    for (a, b), row in zip(cases, printed, strict=True):
        got = [float(v) for v in row.split()]
        assert got == [float(meaning(p, a, b)) for p in sorted(COMPARISONS)], (a, b)


def test_a_predicate_that_is_always_the_same_is_unsupported():
    with pytest.raises(Unsupported, match="predicate true"):
        spell(chosen("true"), PYTHON)


def test_relu_in_the_triton_entry_is_a_where_over_a_negated_comparison():
    from iree_kernels.kinds import triton_family
    relu = ("select", ("cmp", "ugt", ("acc",), ("const", 0.0, "f32")), ("acc",),
            ("const", 0.0, "f32"))
    assert spell(relu, triton_family._SPELLING) == "tl.where((~(acc <= 0.0)), acc, 0.0)"
