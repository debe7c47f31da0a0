"""Output comparisons: tolerances that mean what they say, mismatches said in full precision."""
from __future__ import annotations

import numpy as np
import pytest

from iree_kernels.check.comparison import (Tolerance, mismatch, parse_value, tolerance_error,
                                           ulp_distance)


def test_values_are_read_as_iree_run_module_writes_them(tmp_path):
    assert parse_value("4xf32=1 2 3.5 4").tolist() == [1, 2, 3.5, 4]
    assert parse_value("2x3xf32=7").tolist() == [[7] * 3] * 2          # a splat
    assert parse_value("i32=5").dtype == np.int32 and parse_value("i32=5").shape == ()
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    assert parse_value("@x.npy", tmp_path).tolist() == [0, 1, 2]
    with pytest.raises(ValueError, match="has 3 values for shape"):
        parse_value("4xf32=1 2 3")


ONE_ULP = np.nextafter(np.float32(1.0462400e10), np.float32(np.inf))


def test_zero_tolerance_is_bit_for_bit():
    expected = np.array([1.0462400e10, 1.0], np.float32)
    actual = np.array([ONE_ULP, 1.0], np.float32)
    for exact in (Tolerance(atol=0, rtol=0), Tolerance(ulp=0), Tolerance(rtol=0)):
        said = mismatch(actual, expected, exact)
        assert said.startswith("element [0] is 10462401536.0, expected 10462400512.0 "
                               "(difference 1024.0, 1 ulp); 1 of 2 elements differ (exact)")
    assert mismatch(actual, expected, Tolerance()) is None          # the default: rtol 1e-5
    assert mismatch(actual, expected, Tolerance(ulp=1)) is None


def test_a_nan_matches_any_nan_unless_bitwise():
    quiet = np.array([np.nan, 1.0], np.float32)
    payload = np.array([0x7FC00123, 0xFFC00000], np.uint32).view(np.float32)   # both NaNs
    payload[1] = 1.0
    for tolerance in (Tolerance(), Tolerance(atol=0, rtol=0), Tolerance(ulp=0), Tolerance(ulp=3)):
        assert mismatch(payload, quiet, tolerance) is None
    said = mismatch(payload, quiet, Tolerance(bitwise=True))
    assert said == "element [0] is nan, expected nan (difference nan, 291 ulp); 1 of 2 elements " \
                   "differ (bitwise)"
    assert mismatch(quiet, quiet.copy(), Tolerance(bitwise=True)) is None
    assert mismatch(np.array([np.nan], np.float32), np.array([1.0], np.float32),
                    Tolerance(atol=1e9)) is not None                  # a NaN is no number
    assert mismatch(np.array([-0.0], np.float32), np.array([0.0], np.float32),
                    Tolerance(bitwise=True)) is not None


def test_bitwise_is_a_tolerance_key_of_manifests_that_must_be_a_boolean():
    from iree_kernels.check.comparison import TOLERANCE_KEYS, tolerance_error
    assert "bitwise" in TOLERANCE_KEYS
    assert tolerance_error("bitwise", True) is None
    assert "must be true or false" in tolerance_error("bitwise", 1)
    assert Tolerance(ulp=2, bitwise=True).describe() == "bitwise"


def test_a_mismatch_names_its_index_in_every_dimension():
    expected = np.zeros((2, 3), np.float32)
    actual = expected.copy()
    actual[1, 2] = 0.5
    said = mismatch(actual, expected, Tolerance(atol=0.1))
    assert said.startswith("element [1, 2] is 0.5, expected 0.0 (difference 0.5, ")
    assert said.endswith("1 of 6 elements differ (atol 0.1)")


def test_shape_and_type_differences_are_said():
    assert mismatch(np.zeros(3, np.float32), np.zeros(4, np.float32), Tolerance()) == \
        "has shape [3], expected [4]"
    assert "element type int32, expected float32" in \
        mismatch(np.zeros(3, np.int32), np.zeros(3, np.float32), Tolerance())


def test_ulp_distance_crosses_zero():
    assert ulp_distance(np.array([0.0], np.float32), np.array([-0.0], np.float32)).item() == 0
    tiny = np.nextafter(np.float32(0), np.float32(1))
    assert ulp_distance(np.array([tiny], np.float32), np.array([-tiny], np.float32)).item() == 2


@pytest.mark.parametrize("key, value, problem", [
    ("atol", float("inf"), "must be at most 1e+30 (a larger one passes any output)"),
    ("rtol", 1e308, "must be at most 1e+30 (a larger one passes any output)"),
    ("atol", float("nan"), "must be a non-negative number (0: exact)"),
    ("ulp", 2 ** 40, "must be at most 2.14748e+09 (a larger one passes any output)"),
])
def test_a_tolerance_that_would_pass_any_output_is_refused(key, value, problem):
    assert tolerance_error(key, value) == problem
    assert tolerance_error(key, 1e-5 if key != "ulp" else 4) is None


def test_a_value_claiming_more_than_it_holds_is_refused_not_allocated(tmp_path):
    # An inline 100000x100000x100000xf32 and a .npy header claiming 2^40 floats were
    # MemoryError stacks.
    with pytest.raises(ValueError, match="has 1000000000000000 elements, over the 4 GiB"):
        parse_value("100000x100000x100000xf32=1")
    small = tmp_path / "small.npy"
    with open(small, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False,
                                                 "shape": (2 ** 40,)})
        f.write(bytes(16))
    with pytest.raises(ValueError, match="mmap length is greater than file size"):
        parse_value("@small.npy", tmp_path)
    np.save(small, np.arange(4, dtype=np.float32))
    assert parse_value("@small.npy", tmp_path).tolist() == [0, 1, 2, 3]
