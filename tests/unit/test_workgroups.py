"""iree_kernels.ir.workgroups: a manifest's workgroup_count checked and turned into count-region ops.

The division-by-zero bounds are tested in test_hardening.py; here, the ops,
the names, the shapes of the list and the errors a manifest's author reads.
"""
from __future__ import annotations

import re

import pytest

from iree_kernels.ir.workgroups import SYNTAX, ExpressionError, count_region


def test_one_expression_is_x_and_y_z_are_one():
    region = count_region(["ceildiv(w0, 64)"], workload=1)
    assert region.ops == ["%c64 = arith.constant 64 : index",
                          "%v1 = arith.ceildivui %w0, %c64 : index",
                          "%c1 = arith.constant 1 : index"]
    assert region.results == ["%v1", "%c1", "%c1"]


def test_each_operator_maps_to_its_unsigned_index_op():
    region = count_region(["w0 + w1", "w0 - w1", "w0 * w1"], workload=2)
    assert [op.split(" = ")[1].split()[0] for op in region.ops] == \
        ["arith.addi", "arith.subi", "arith.muli"]
    region = count_region(["w0 // 2", "min(w0, w1)", "max(w0, 3)"], workload=2)
    assert [op.split(" = ")[1].split()[0] for op in region.ops if "constant" not in op] == \
        ["arith.divui", "arith.minui", "arith.maxui"]
    assert len(region.results) == 3 and "%c1" not in region.results


def test_integers_and_strings_mix_and_constants_are_made_once():
    region = count_region([4, "w0 * 4", "4"], workload=1)
    assert region.ops.count("%c4 = arith.constant 4 : index") == 1
    assert region.results == ["%c4", "%v1", "%c4"]


def test_nested_expressions_use_earlier_results():
    region = count_region(["min(w0, w1) + 1"], workload=2)
    assert region.ops[:3] == ["%v0 = arith.minui %w0, %w1 : index",
                              "%c1 = arith.constant 1 : index",
                              "%v2 = arith.addi %v0, %c1 : index"]
    assert region.results[0] == "%v2"


def test_the_workload_names_are_those_the_export_takes():
    assert count_region(["w2"], workload=3).results[0] == "%w2"
    with pytest.raises(ExpressionError, match=r"unknown name 'w3'; the workload values are w0, w1, w2$"):
        count_region(["w3"], workload=3)
    with pytest.raises(ExpressionError, match="the workload values are none: this executable's "
                                              "count is constant"):
        count_region(["w0"], workload=0)


def test_without_a_workload_any_w_name_passes_and_others_do_not():
    assert count_region(["w17 + 1"], workload=None).results[0].startswith("%v")
    with pytest.raises(ExpressionError, match=r"unknown name 'n'; the workload values are named w0, w1, \.\.\."):
        count_region(["n"], workload=None)


@pytest.mark.parametrize("expression, message", [
    ("w0 ** 2", "'w0 ** 2' is not allowed"),
    ("w0 / 2", "'w0 / 2' is not allowed"),
    ("-1", "'-1' is not allowed"),
    ("abs(w0)", "'abs(w0)' is not allowed"),
    ("min(w0)", "'min(w0)' is not allowed"),
    ("max(w0, b=1)", "'max(w0, b=1)' is not allowed"),
    ("True", "'True' is not allowed"),
    ("__import__('os')", "is not allowed"),
    ("1.5", "'1.5' is not allowed"),
])
def test_what_is_not_the_syntax_is_refused_naming_the_syntax(expression, message):
    with pytest.raises(ExpressionError, match=re.escape(message)) as refused:
        count_region([expression], workload=1)
    assert str(refused.value).endswith(f"use {SYNTAX}")


@pytest.mark.parametrize("expressions, message", [
    ("ceildiv(w0, 64)", "expected a list of 1 to 3 expressions (x, y, z)"),
    ([], "expected 1 to 3 expressions (x, y, z), found 0"),
    ([1, 1, 1, 1], "expected 1 to 3 expressions (x, y, z), found 4"),
    ([1.5], "1.5 is neither an integer nor an expression string"),
    ([True], "True is neither an integer nor an expression string"),
    (["w0 +"], "'w0 +' is not an expression; use integers, w0"),
])
def test_a_malformed_list_says_what_is_wrong(expressions, message):
    with pytest.raises(ExpressionError, match=re.escape(message)):
        count_region(expressions, workload=1)


def test_an_error_is_a_value_error_for_callers_that_catch_those():
    assert issubclass(ExpressionError, ValueError)


@pytest.mark.parametrize("expressions, message", [
    (["0"], "'0' is 0: it launches no workgroups"),
    (["ceildiv(w0, 1024) - ceildiv(w0, 1024) - 1 + w0 * 0", "3 - 4"],
     "'3 - 4' is negative (-1); a workgroup count wraps to 2^64 - 1 and more"),
    (["4294967296"], "'4294967296' is 2^32 or more; a workgroup count is a 32-bit value"),
    (["65536 * 65536"], "'65536 * 65536' is 4294967296, 2^32 or more"),
    (["12345678901234567890123456"], "is 2^32 or more"),
    ([" + ".join(["w0"] * 20000)], "characters long; an expression may be 1000"),
    (["(" * 300 + "w0" + ")" * 300], "is not an expression"),
])
def test_a_count_that_is_constant_must_be_one_to_2_to_the_32(expressions, message):
    with pytest.raises(ExpressionError, match=re.escape(message)):
        count_region(expressions, 1)


def test_a_count_is_evaluated_as_the_device_computes_it():
    from iree_kernels.ir.workgroups import evaluate
    assert evaluate(["ceildiv(w0, 1024)", "w1 // 2"], (5000, 7)) == [5, 3, 1]
    assert evaluate(["ceildiv(w0, 1024) - ceildiv(w0, 1024) - 1"], (5000,)) == [2 ** 64 - 1, 1, 1]
    assert evaluate(["min(w0, 4) * max(w1, 2)"], (9, 0)) == [8, 1, 1]
