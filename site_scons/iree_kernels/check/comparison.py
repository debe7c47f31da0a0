"""Comparing what a module computed with what a case expects, with tolerances that mean what they say.

Values are written as iree-run-module reads them (``4xf32=1 2 3 4``,
``f32=2``, ``@file.npy``). A tolerance is ``atol`` and ``rtol`` (an element
passes when ``|actual - expected| <= atol + rtol * |expected|``) and, for
floating-point outputs, ``ulp`` (at most that many representable values
apart). Zero means zero: ``atol = 0, rtol = 0`` or ``ulp = 0`` is bit-for-bit
equality. A NaN matches a NaN whatever its payload bits (kernels and
compilers differ in the NaNs they make), unless ``bitwise`` asks for
bit-for-bit outputs, NaN payloads and all. With none given, the defaults
of iree-run-module's own comparison apply: ``atol`` 1e-4 (1e-3 for 16-bit
floats) and ``rtol`` 1e-5; integers compare exactly. A mismatch is described by its index, both
values in full precision, their difference and their distance in ulps.
This module runs nothing.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from iree_kernels.project.tolerances import TOLERANCE_KEYS, Tolerance, tolerance_error  # noqa: F401 (re-exported)

DEFAULT_RTOL = 1e-5
DEFAULT_ATOL = {2: 1e-3, 4: 1e-4, 8: 1e-4}     # by float size in bytes
_DTYPES = {"f16": np.float16, "bf16": None, "f32": np.float32, "f64": np.float64,
           "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "si8": np.int8, "si16": np.int16, "si32": np.int32, "si64": np.int64,
           "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
           "i1": np.bool_}
_VALUE_RE = re.compile(r"^(?:(?P<shape>(?:\d+x)*))(?P<type>[a-z]+\d+)(?:=(?P<values>.*))?$", re.S)


MAX_VALUE_BYTES = 4 << 30


def parse_value(text: str, root: str | Path = ".") -> np.ndarray:
    """An input or output as iree-run-module reads it; ``@path`` is a .npy file under ``root``."""
    if text.startswith("@"):
        # Mapped: a header claiming more data than the file holds is a ValueError, not an
        # allocation of what it claims.
        return np.load(Path(root) / text[1:], mmap_mode="r")
    found = _VALUE_RE.match(text.strip())
    if not found or found.group("type") not in _DTYPES or _DTYPES[found.group("type")] is None:
        raise ValueError(f"'{text[:60]}' is not a value this check reads "
                         "(SHAPExTYPE=values with TYPE one of f16, f32, f64, i8..i64, ui8..ui64, i1)")
    shape = [int(d) for d in found.group("shape").split("x") if d]
    values = (found.group("values") or "0").replace(",", " ").replace("[", " ").replace("]", " ")
    dtype = _DTYPES[found.group("type")]
    numbers = np.array([float(v) if dtype().dtype.kind == "f" else int(v)
                        for v in values.split()], dtype=dtype)
    count = math.prod(shape)
    if count * dtype().itemsize > MAX_VALUE_BYTES:
        raise ValueError(f"'{text[:60]}' has {count} elements, over the "
                         f"{MAX_VALUE_BYTES >> 30} GiB a value written inline may hold")
    if numbers.size == 1 and count != 1:
        return np.full(shape, numbers[0], dtype=dtype)
    if numbers.size != count:
        raise ValueError(f"'{text[:60]}' has {numbers.size} values for shape {shape}")
    return numbers.reshape(shape)


def mismatch(actual: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> str | None:
    """Why ``actual`` is not ``expected`` within ``tolerance``; None where it is."""
    if actual.shape != expected.shape:
        return f"has shape {list(actual.shape)}, expected {list(expected.shape)}"
    if actual.dtype != expected.dtype:
        return f"has element type {actual.dtype}, expected {expected.dtype}"
    bad = ~_close(actual, expected, tolerance)
    if not bad.any():
        return None
    flat = int(np.flatnonzero(bad)[0])
    index = np.unravel_index(flat, actual.shape) if actual.shape else ()
    got, want = actual.reshape(-1)[flat], expected.reshape(-1)[flat]
    detail = f"difference {_full(np.float64(got) - np.float64(want))}"
    if actual.dtype.kind == "f":
        detail += f", {ulp_distance(np.asarray(got), np.asarray(want)).item()} ulp"
    where = "[" + ", ".join(map(str, index)) + "]"
    return (f"element {where} is {_full(got)}, expected {_full(want)} ({detail}); "
            f"{int(bad.sum())} of {bad.size} elements differ ({tolerance.describe()})")


def _close(actual: np.ndarray, expected: np.ndarray, tolerance: Tolerance) -> np.ndarray:
    same = _bits(actual) == _bits(expected)
    if actual.dtype.kind == "f" and not tolerance.bitwise:
        same |= np.isnan(actual) & np.isnan(expected)
    untoleranced = tolerance.atol is None and tolerance.rtol is None and tolerance.ulp is None
    if tolerance.exact or (actual.dtype.kind != "f" and untoleranced):
        return same
    if tolerance.ulp is not None and actual.dtype.kind == "f":
        return same | (ulp_distance(actual, expected) <= tolerance.ulp)
    if untoleranced:
        atol, rtol = DEFAULT_ATOL.get(actual.dtype.itemsize, 0.0), DEFAULT_RTOL
    else:
        atol, rtol = tolerance.atol or 0.0, tolerance.rtol or 0.0
    a, e = actual.astype(np.float64), expected.astype(np.float64)
    return same | (np.abs(a - e) <= atol + rtol * np.abs(e))


def _bits(values: np.ndarray) -> np.ndarray:
    """Each element's bits as one unsigned integer (NaN == NaN where the bits agree)."""
    return np.ascontiguousarray(values).view(np.dtype(f"u{values.dtype.itemsize}"))


def ulp_distance(actual: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """How many representable floats lie between each pair (0: the same value)."""
    bits = np.dtype(f"i{actual.dtype.itemsize}")

    def ordered(values):
        raw = np.ascontiguousarray(values).view(bits).astype(np.int64)
        return np.where(raw < 0, np.iinfo(bits).min - raw, raw)
    return np.abs(ordered(actual) - ordered(expected))


def _full(value) -> str:
    """A number in full precision: the shortest text that reads back as the same value."""
    return repr(value.item()) if hasattr(value, "item") else repr(value)
