"""A comparison's tolerance as manifests and expected outputs give it, and its checks; no numpy.

What the values mean is in ``comparison``, which compares with them; this
module is what reading a manifest needs (a build that compares nothing
does not import numpy).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tolerance:
    atol: float | None = None
    rtol: float | None = None
    ulp: int | None = None
    bitwise: bool = False      # every bit, NaN payloads included; the others then do not apply

    @property
    def exact(self) -> bool:
        return self.bitwise or self.ulp == 0 or (self.atol == 0 and self.rtol in (0, None)) or \
            (self.rtol == 0 and self.atol in (0, None))

    def describe(self) -> str:
        if self.bitwise:
            return "bitwise"
        if self.exact:
            return "exact"
        parts = [f"{name} {value}" for name, value in
                 (("atol", self.atol), ("rtol", self.rtol), ("ulp", self.ulp)) if value]
        return ", ".join(parts) or "the default tolerance"


TOLERANCE_KEYS = ("atol", "rtol", "ulp", "bitwise")


def tolerance_error(key: str, value) -> str | None:
    """What is wrong with ``value`` as the tolerance ``key`` of a manifest; None where nothing is."""
    if key == "bitwise":
        if value is not None and not isinstance(value, bool):
            return "must be true or false (true: outputs equal bit for bit, NaN payloads too)"
        return None
    number = int if key == "ulp" else (int, float)
    if value is not None and (not isinstance(value, number) or isinstance(value, bool)
                              or not value >= 0):
        return f"must be a non-negative {'integer' if key == 'ulp' else 'number'} (0: exact)"
    # inf, nan or an |a - b| <= atol + rtol * |b| that overflows would pass any output.
    if value is not None and not value <= LARGEST[key]:
        return f"must be at most {LARGEST[key]:g} (a larger one passes any output)"
    return None


LARGEST = {"atol": 1e30, "rtol": 1e30, "ulp": 2 ** 31}
