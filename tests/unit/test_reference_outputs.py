"""Seeded inputs for expected outputs: IREE's declared tensor types, finite values of a realistic range."""
from __future__ import annotations

import numpy as np
import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.check.reference_outputs import TensorType, seeded_input


def test_a_declared_tensor_type_gives_its_shape_and_element_type():
    assert TensorType.parse("tensor<1x3x224x224xf32>", "main") == TensorType((1, 3, 224, 224), "f32")
    assert TensorType.parse(" tensor<f16>", "main") == TensorType((), "f16")


@pytest.mark.parametrize("text, says", [("tensor<?x4xf32>", "author's to choose"),
                                        ("i32", "not a tensor")])
def test_inputs_that_cannot_be_generated_are_named(text, says):
    with pytest.raises(UserError, match=says) as e:
        TensorType.parse(text, "forward")
    assert "@forward" in str(e.value)


@pytest.mark.parametrize("element", ["f16", "f32", "bf16"])
def test_float_inputs_are_finite_and_in_minus_one_to_one(element):
    values = seeded_input(TensorType((64, 64), element), np.random.default_rng(1))
    as_float = values.astype(np.float64)
    assert np.all(np.isfinite(as_float)) and np.all(np.abs(as_float) <= 1)
    assert len(np.unique(as_float)) > 1000


def test_integer_inputs_are_small_and_the_same_for_the_same_seed():
    first = seeded_input(TensorType((100,), "i64"), np.random.default_rng(7))
    again = seeded_input(TensorType((100,), "i64"), np.random.default_rng(7))
    assert first.dtype == np.int64 and first.min() >= 0 and first.max() < 10
    np.testing.assert_array_equal(first, again)


def test_a_torch_programs_functions_are_read_up_to_its_weights(tmp_path):
    from iree_kernels.check.reference_outputs import Signature, torch_signatures
    model = tmp_path / "net.mlir"
    model.write_text(
        "module @module {\n"
        "  func.func @main(%arg0: !torch.vtensor<[2,4],f32>, %arg1: !torch.vtensor<[3],si64>) -> "
        "(!torch.vtensor<[2,3],f32>, !torch.vtensor<[],f32>) attributes "
        "{torch.assume_strict_symbolic_shapes} {\n    return\n  }\n"
        "  func.func @scalar(%arg0: !torch.vtensor<[],bf16>) -> !torch.vtensor<[],bf16> {\n"
        "}\n{-#\n  func.func @inside_the_weights(%arg0: !torch.vtensor<[1],f32>) -> "
        "!torch.vtensor<[1],f32> {\n#-}\n")
    assert torch_signatures(str(model)) == {
        "main": Signature((TensorType((2, 4), "f32"), TensorType((3,), "i64")), 2),
        "scalar": Signature((TensorType((), "bf16"),), 1)}


def test_a_torch_function_with_a_dynamic_dimension_is_left_to_its_author(tmp_path):
    from iree_kernels.check.reference_outputs import torch_signatures
    model = tmp_path / "net.mlir"
    model.write_text("  func.func @main(%arg0: !torch.vtensor<[?,32],f32>) -> "
                     "!torch.vtensor<[?,8],f32> {\n")
    with pytest.raises(UserError, match=r"@main takes a tensor<\?x32xf32>: its shape is the "
                                        "model author's to choose"):
        torch_signatures(str(model))
