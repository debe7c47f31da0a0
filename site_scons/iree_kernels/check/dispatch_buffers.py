"""The buffer of one differential-check dispatch: where its tensors lie, what it starts from, and what differs.

Compiled plain and with the substitution, the two results are compared
tensor by tensor, using the subspans of the executable (byte offset, also
one computed from the site's push constants, element type, shape, access),
with the tolerance; bytes outside the tensors it can place are compared as
the binding's element type where IREE's executable writes them, and must be
left alone where it does not. A kernel that writes past its outputs, into an
input, or leaves part of its output unwritten fails with the site, the
binding, the element's index, both values in full precision and their
distance in ulps. Inputs are finite values of each binding's element type,
so a wrong kernel cannot hide behind NaNs and infinities.

Not for: making the harness module (``harness``), the plan of a check and
running it (``verification``), comparing two arrays (``comparison``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from iree_kernels.check.comparison import Tolerance, mismatch
from iree_kernels.check.harness import Case
from iree_kernels.ir.executables import Subspan

_NUMPY = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "bf16": "<u2",
          "i1": "u1", "i8": "i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
          "si8": "i1", "si16": "<i2", "si32": "<i4", "si64": "<i8",
          "ui8": "u1", "ui16": "<u2", "ui32": "<u4", "ui64": "<u8"}


@dataclass
class Region:
    """Where one subspan's tensor lies in a case's buffer."""
    binding: int
    start: int                # byte offset in the buffer
    element: str              # "f32"
    shape: tuple[int, ...]
    access: str               # "readonly", "writeonly", "readwrite"

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(_NUMPY.get(self.element, "u1"))

    @property
    def end(self) -> int:
        return self.start + int(np.prod(self.shape, dtype=np.int64)) * self.dtype.itemsize


def regions(case: Case, subspans: tuple[Subspan, ...]) -> list[Region]:
    """The tensors of ``case``'s buffer.

    An offset computed from push constants is computed with the case's. A
    dynamic tensor that is alone in its binding is taken to fill the binding
    from its offset, flattened; other dynamic tensors, and tensors at offsets
    this check cannot compute, are compared as their binding's bytes.
    """
    found = []
    for s in subspans:
        at = s.offset_at(case.constants)
        if s.binding >= len(case.bindings) or at is None:
            continue
        offset, length = case.bindings[s.binding]
        shape = s.shape
        if s.dynamic:
            alone = sum(o.binding == s.binding for o in subspans) == 1
            itemsize = np.dtype(_NUMPY.get(s.element, "u1")).itemsize
            if not alone or length <= at:
                continue
            shape = ((length - at) // itemsize,)
        region = Region(s.binding, offset + at, s.element, shape, s.access)
        if region.end <= offset + length:
            found.append(region)
    return found


def binding_elements(subspans: tuple[Subspan, ...], count: int) -> tuple[str, ...]:
    """Per binding, the element type every tensor in it has, or "" (none, or several)."""
    types = [{s.element for s in subspans if s.binding == b} for b in range(count)]
    return tuple(next(iter(t)) if len(t) == 1 and next(iter(t)) in _NUMPY else "" for t in types)


def values_of(element: str, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` random values of ``element``: floats finite in [-1, 1], integers small."""
    dtype = np.dtype(_NUMPY.get(element, "u1"))
    if element == "bf16":             # the upper half of an f32
        return (rng.uniform(-1.0, 1.0, count).astype("<f4").view("<u4") >> 16).astype("<u2")
    if dtype.kind == "f":
        return rng.uniform(-1.0, 1.0, count).astype(dtype)
    if element == "i1":
        return rng.integers(0, 2, count).astype(dtype)
    return rng.integers(0, 8, count).astype(dtype)


def random_input(case: Case, tensors: list[Region], seed: int) -> np.ndarray:
    """The buffer both executables start from: values of each tensor's type, and of each
    binding's element type around them; random bytes only where neither is known."""
    rng = np.random.default_rng(seed)
    buffer = rng.integers(0, 256, case.size, dtype=np.uint8)
    for (offset, length), element in zip(case.bindings, case.elements):
        if element:
            itemsize = np.dtype(_NUMPY[element]).itemsize
            buffer[offset:offset + length // itemsize * itemsize] = \
                values_of(element, length // itemsize, rng).view(np.uint8)
    for r in tensors:
        count = int(np.prod(r.shape, dtype=np.int64))
        buffer[r.start:r.end] = values_of(r.element, count, rng).view(np.uint8)
    return buffer


def compare(case: Case, tensors: list[Region], start: np.ndarray, iree: np.ndarray,
            kernel: np.ndarray, tolerance: Tolerance) -> str | None:
    """Why ``kernel``'s buffer is not ``iree``'s; None where they agree."""
    if iree.shape != kernel.shape:
        return f"the buffers differ in size: IREE {iree.size} bytes, kernel {kernel.size}"
    covered = np.zeros(case.size, dtype=bool)
    for r in tensors:
        covered[r.start:r.end] = True
    written = _written(case, start, iree)
    stray = np.flatnonzero((iree != kernel) & ~covered & ~written)
    compared = np.zeros(case.size, dtype=bool)
    for r in sorted(tensors, key=lambda r: r.access == "readonly"):
        if compared[r.start:r.end].all():
            continue
        compared[r.start:r.end] = True
        want, got = (b[r.start:r.end].view(r.dtype).reshape(r.shape) for b in (iree, kernel))
        output = r.access != "readonly"
        wrong = mismatch(got, want, _tolerance_of(r.element, tolerance, output))
        if wrong:
            what = "output" if output else "input (read-only)"
            offset = r.start - case.bindings[r.binding][0]
            unwritten = _unwritten(start[r.start:r.end].view(r.dtype).reshape(r.shape), got, want)
            elsewhere = _written_elsewhere(case, r.binding, stray, offset) if unwritten else ""
            return (f"binding {r.binding} ({what} {'x'.join(map(str, r.shape))}x{r.element} at "
                    f"byte {offset}): {wrong}{unwritten}{elsewhere}")
    wrong = _unplaced_output(case, covered, written, iree, kernel, tolerance)
    if wrong:
        return wrong
    if stray.size:
        first = int(stray[0])
        binding = _binding_of(case, first)
        where = (f"binding {binding} byte {first - case.bindings[binding][0]}"
                 if binding is not None else f"byte {first} of the buffer, outside every binding")
        return (f"{stray.size} bytes outside the executable's tensors differ, first at {where}: "
                "the kernel writes where IREE's executable does not")
    return None


def _tolerance_of(element: str, tolerance: Tolerance, output: bool) -> Tolerance:
    """Outputs of a type numpy reads as floats within ``tolerance``; the rest exactly."""
    if output and element != "bf16":
        return tolerance
    return Tolerance(ulp=0, bitwise=tolerance.bitwise)


def _written(case: Case, start: np.ndarray, iree: np.ndarray) -> np.ndarray:
    """The bytes IREE's executable wrote: whole elements of the binding's type where one
    byte of them changed (a written byte may keep its value by chance), else bytes."""
    written = start != iree
    for (offset, length), element in zip(case.bindings, case.elements):
        itemsize = np.dtype(_NUMPY.get(element, "u1")).itemsize if element else 1
        end = offset + length // itemsize * itemsize
        if itemsize > 1 and end > offset:
            words = written[offset:end].reshape(-1, itemsize).any(axis=1)
            written[offset:end] = np.repeat(words, itemsize)
    return written


def _unplaced_output(case: Case, covered: np.ndarray, written: np.ndarray, iree: np.ndarray,
                     kernel: np.ndarray, tolerance: Tolerance) -> str | None:
    """Bytes IREE's executable writes outside every tensor this check could place (at an
    offset it could not compute): output all the same, compared as the binding's elements."""
    for number, ((offset, length), element) in enumerate(zip(case.bindings, case.elements)):
        outside = written[offset:offset + length] & ~covered[offset:offset + length]
        if not outside.any():
            continue
        dtype = np.dtype(_NUMPY[element]) if element else np.dtype("u1")
        whole = length // dtype.itemsize
        chosen = outside[:whole * dtype.itemsize].reshape(whole, -1).all(axis=1)
        at = np.flatnonzero(chosen) * dtype.itemsize
        want, got = (b[offset:offset + whole * dtype.itemsize].view(dtype)[chosen]
                     for b in (iree, kernel))
        wrong = mismatch(got, want, _tolerance_of(element, tolerance, bool(element)))
        if wrong:
            first = re.match(r"element \[(\d+)\]", wrong)
            wrong = f"the {element or 'byte'} at byte {int(at[int(first.group(1))])}" + \
                wrong[first.end():]
            return (f"binding {number} (what IREE's executable writes outside the tensors this "
                    f"check could place, as {element or 'bytes'}): {wrong}")
    return None


def _binding_of(case: Case, byte: int) -> int | None:
    return next((i for i, (o, n) in enumerate(case.bindings) if o <= byte < o + n), None)


def _written_elsewhere(case: Case, binding: int, stray: np.ndarray, offset: int) -> str:
    """Where the kernel wrote in ``binding`` outside every tensor, said as a likely cause."""
    start, length = case.bindings[binding]
    inside = stray[(stray >= start) & (stray < start + length)] - start
    if not inside.size:
        return " (a launch grid that covers part of the output?)"
    return (f"; instead it wrote {inside.size} bytes of binding {binding} outside every tensor, "
            f"from byte {int(inside[0])} (does it ignore the byte offset {offset}?)")


def _unwritten(start: np.ndarray, got: np.ndarray, want: np.ndarray) -> str:
    same = (start.view(np.uint8) == got.view(np.uint8)).reshape(start.shape + (-1,)).all(-1)
    left = same & (start.view(np.uint8) != want.view(np.uint8)).reshape(start.shape + (-1,)).any(-1)
    if not left.any():
        return ""
    return (f"; {int(left.sum())} of {left.size} elements still hold their input value: "
            "the kernel did not write them")
