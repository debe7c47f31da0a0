"""Per-executable differential checks: IREE's executable and its substitute, run on the same bytes.

IREE's benchmark dump (``--iree-hal-dump-executable-benchmarks-to``) writes,
per executable and static dispatch site, a module that packs the dispatch's
bindings into one buffer and dispatches it in a loop. :func:`harness` turns
each such benchmark function into one that dispatches once on a buffer it is
given and returns it, so ``iree-run-module`` can feed it seeded random bytes
and write back what the executable left there. Compiled plain and with the
substitution, the two results are compared tensor by tensor, using the
subspans of the executable (byte offset, element type, shape, access), and
byte for byte everywhere else: a kernel that writes past its outputs, into
an input, or leaves part of its output unwritten fails with the binding, the
element's index, both values in full precision and their distance in ulps.

This module runs iree-compile and iree-run-module through ``toolchains.run``;
it declares no build steps.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import toolchains
from .benchmarks import with_source
from .comparison import Tolerance, mismatch
from .errors import UserError
from .executables import Subspan

FORMAT = 1
_INPUT = "%iree_kernels_verify_input"
_FUNCTION_RE = re.compile(
    r"^  util\.func public @(?P<name>\S+)\((?P<count>%[\w.$-]+): i32\)(?P<attrs>[^\n]*)\{\n"
    r"(?P<body>.*?)^  \}$", re.M | re.S)
_CONSTANT_RE = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (\d+) : index$", re.M)
_BINDING_RE = re.compile(r"\(%[\w.$-]+ : !hal\.buffer\)\[(%[\w.$-]+), (%[\w.$-]+)\]")
_NUMPY = {"f16": "<f2", "f32": "<f4", "f64": "<f8", "bf16": "<u2",
          "i1": "u1", "i8": "i1", "i16": "<i2", "i32": "<i4", "i64": "<i8",
          "si8": "i1", "si16": "<i2", "si32": "<i4", "si64": "<i8",
          "ui8": "u1", "ui16": "<u2", "ui32": "<u4", "ui64": "<u8"}


@dataclass
class Case:
    """One dispatch of one executable: a function of the harness module."""
    function: str
    bindings: list[tuple[int, int]]       # per binding: (offset, length) in the one buffer

    @property
    def size(self) -> int:
        return max((offset + length for offset, length in self.bindings), default=0)


def harness(benchmark: str, origin: str) -> tuple[str, list[Case]]:
    """The benchmark module ``benchmark`` (its text) rewritten to dispatch once on a given buffer."""
    cases, pieces, last = [], [], 0
    for found in _FUNCTION_RE.finditer(benchmark):
        body = found.group("body")
        loads = re.findall(r"^(\s*)(%[\w.$-]+) = util\.global\.load @\S+ : !hal\.buffer$",
                           body, re.M)
        counts = re.findall(rf"^\s*(%[\w.$-]+) = arith\.index_cast {re.escape(found.group('count'))}"
                            r" : i32 to index$", body, re.M)
        if len(loads) != 1 or len(counts) != 1 or body.count("util.return\n") != 1:
            raise UserError(f"IREE's benchmark of '{found.group('name')}' is not in the form "
                            "this check reads (one buffer, one loop, one return); "
                            "was it written by another IREE version?", file=origin)
        constants = {name: int(value) for name, value in _CONSTANT_RE.findall(body)}
        try:
            bindings = [(constants[o], constants[n]) for o, n in _BINDING_RE.findall(body)]
        except KeyError:
            raise UserError(f"IREE's benchmark of '{found.group('name')}' binds ranges that are "
                            "not constants", file=origin) from None
        cases.append(Case(found.group("name"), bindings))
        (indent, buffer), = loads
        body = re.sub(r"^\s*%[\w.$-]+ = util\.global\.load @\S+ : !hal\.buffer$",
                      lambda _: f"{indent}{buffer} = hal.buffer_view.buffer<{_INPUT} : "
                                "!hal.buffer_view> : !hal.buffer", body, count=1, flags=re.M)
        body = re.sub(r"^(\s*)(%[\w.$-]+) = arith\.index_cast \S+ : i32 to index$",
                      lambda m: f"{m.group(1)}{m.group(2)} = arith.constant 1 : index",
                      body, count=1, flags=re.M)
        body = body.replace("util.return\n", f"util.return {_INPUT} : !hal.buffer_view\n")
        pieces += [benchmark[last:found.start()],
                   f"  util.func public @{found.group('name')}({_INPUT}: !hal.buffer_view) -> "
                   f"!hal.buffer_view{found.group('attrs')}{{\n{body}  }}"]
        last = found.end()
    if not cases:
        raise UserError("IREE's benchmark module has no benchmark function", file=origin)
    return "".join(pieces) + benchmark[last:], cases


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

    A dynamic tensor that is alone in its binding is taken to fill the binding
    from its offset, flattened; other dynamic tensors, and tensors at offsets
    computed at run time, are left to the byte-for-byte comparison.
    """
    found = []
    for s in subspans:
        if s.binding >= len(case.bindings) or not isinstance(s.offset, int):
            continue
        offset, length = case.bindings[s.binding]
        shape = s.shape
        if s.dynamic:
            alone = sum(o.binding == s.binding for o in subspans) == 1
            itemsize = np.dtype(_NUMPY.get(s.element, "u1")).itemsize
            if not alone or length <= s.offset:
                continue
            shape = ((length - s.offset) // itemsize,)
        region = Region(s.binding, offset + s.offset, s.element, shape, s.access)
        if region.end <= offset + length:
            found.append(region)
    return found


def random_input(case: Case, tensors: list[Region], seed: int) -> np.ndarray:
    """The buffer both executables start from: each tensor random in its own type, the rest random bytes."""
    rng = np.random.default_rng(seed)
    buffer = rng.integers(0, 256, case.size, dtype=np.uint8)
    for r in tensors:
        count = int(np.prod(r.shape, dtype=np.int64))
        if r.dtype.kind == "f" and r.element != "bf16":
            values = rng.uniform(-1.0, 1.0, count).astype(r.dtype)
        elif r.element == "i1":
            values = rng.integers(0, 2, count).astype(r.dtype)
        elif r.dtype.kind in "iu" and r.element != "bf16":
            values = rng.integers(0, 8, count).astype(r.dtype)
        else:     # bf16: the upper half of an f32
            values = (rng.uniform(-1.0, 1.0, count).astype("<f4").view("<u4") >> 16).astype("<u2")
        buffer[r.start:r.end] = values.view(np.uint8)
    return buffer


def compare(case: Case, tensors: list[Region], start: np.ndarray, iree: np.ndarray,
            kernel: np.ndarray, tolerance: Tolerance) -> str | None:
    """Why ``kernel``'s buffer is not ``iree``'s; None where they agree."""
    if iree.shape != kernel.shape:
        return f"the buffers differ in size: IREE {iree.size} bytes, kernel {kernel.size}"
    covered = np.zeros(case.size, dtype=bool)
    for r in tensors:
        covered[r.start:r.end] = True
    stray = np.flatnonzero((iree != kernel) & ~covered)
    compared = np.zeros(case.size, dtype=bool)
    for r in sorted(tensors, key=lambda r: r.access == "readonly"):
        if compared[r.start:r.end].all():
            continue
        compared[r.start:r.end] = True
        want, got = (b[r.start:r.end].view(r.dtype).reshape(r.shape) for b in (iree, kernel))
        written = r.access != "readonly"
        wrong = mismatch(got, want, tolerance if written and r.element != "bf16" else Tolerance(ulp=0))
        if wrong:
            what = "output" if written else "input (read-only)"
            offset = r.start - case.bindings[r.binding][0]
            unwritten = _unwritten(start[r.start:r.end].view(r.dtype).reshape(r.shape), got, want)
            elsewhere = _written_elsewhere(case, r.binding, stray, offset) if unwritten else ""
            return (f"binding {r.binding} ({what} {'x'.join(map(str, r.shape))}x{r.element} at "
                    f"byte {offset}): {wrong}{unwritten}{elsewhere}")
    if stray.size:
        first = int(stray[0])
        binding = _binding_of(case, first)
        where = (f"binding {binding} byte {first - case.bindings[binding][0]}"
                 if binding is not None else f"byte {first} of the buffer, outside every binding")
        return (f"{stray.size} bytes outside the executable's tensors differ, first at {where}: "
                "the kernel writes where IREE's executable does not")
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


SEED = 0


@dataclass
class Plan:
    """What the differential check of one substitution runs: written as ``<key>.verify.json``."""
    model: str
    target: str
    executable: str
    kernel: str                            # the kernel file, as the manifest names it
    tolerance: dict                        # atol, rtol, ulp (None: the default)
    note: str = ""                         # why there is nothing to run, where there is not
    cases: list[dict] = field(default_factory=list)   # function, bindings, regions
    iree_module: str = ""
    kernel_module: str = ""
    seed: int = SEED
    shapes: str = ""                       # where dynamic shapes were taken from
    format: int = FORMAT


def harnesses(dumped: dict[str, tuple[Path, str]], program_text: str, program: str,
              names: list[str]) -> dict[str, dict]:
    """Per executable of ``names``: {"harness": MLIR text, "cases": [...], "shapes": ...} or {"note": why none}.

    ``dumped``: the benchmark module IREE dumped for each executable, and where
    its shapes are from (``benchmarks.dump_benchmarks_of``); ``program_text``: the
    executable-sources program, whose executables (IREE's own, before codegen)
    go into the harnesses.
    """
    from .executables import read_executables
    from .program import Program

    found = read_executables(program_text, program)
    out = {}
    with Program(program_text, program) as sources:
        for name in names:
            if name not in dumped:
                out[name] = {"note": "IREE dumps no benchmark for it (dynamic shapes or "
                                     "push constants computed at run time)"}
                continue
            bench, shapes = dumped[name]
            text, cases = harness(with_source(bench, sources, name), str(bench))
            out[name] = {"harness": text, "shapes": shapes, "cases": [
                {"function": c.function, "bindings": c.bindings,
                 "regions": [asdict(r) for r in regions(c, found[name].subspans)]}
                for c in cases]}
    return out


def run(plan: Plan, run_module: str, device: str, work: Path) -> str | None:
    """Run both modules of ``plan`` on ``device`` and compare; why they differ, or None."""
    tolerance = Tolerance(**plan.tolerance)
    work.mkdir(parents=True, exist_ok=True)
    for number, case in enumerate(plan.cases):
        c = Case(case["function"], [tuple(b) for b in case["bindings"]])
        tensors = [Region(**{**r, "shape": tuple(r["shape"])}) for r in case["regions"]]
        start = random_input(c, tensors, plan.seed + number)
        given = work / f"{number}.input.npy"
        np.save(given, start)
        outputs = {}
        for who, module in (("iree", plan.iree_module), ("kernel", plan.kernel_module)):
            written = work / f"{number}.{who}.npy"
            toolchains.run([run_module, f"--module={module}", f"--device={device}",
                            f"--function={c.function}", f"--input=@{given}",
                            f"--output=@{written}"], module, f"run the differential check of "
                           f"{plan.executable}")
            outputs[who] = np.load(written).reshape(-1).view(np.uint8)
        wrong = compare(c, tensors, start, outputs["iree"], outputs["kernel"], tolerance)
        if wrong:
            shown_case = f" (dispatch {number + 1} of {len(plan.cases)})" if len(plan.cases) > 1 else ""
            return f"{wrong}{shown_case}"
    return None


def to_json(plan: Plan) -> str:
    return json.dumps(asdict(plan), indent=1, sort_keys=True) + "\n"


def from_json(text: str, source: str) -> Plan:
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')}, this library reads {FORMAT}")
        return Plan(**data)
    except (ValueError, TypeError) as e:
        raise UserError(f"is not a differential-check plan this library reads: {e}",
                        file=source) from None


def describe(plan: Plan) -> str:
    shapes = f", {plan.shapes}" if plan.shapes else ""
    return (f"{plan.model}/{plan.target} {plan.executable} ({plan.kernel}, "
            f"{Tolerance(**plan.tolerance).describe()}{shapes})")


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.verification PLAN.verify.json...: run differential checks built elsewhere.

    For a machine with the device but without the compiler: carry build/ there.
    """
    import argparse
    import tempfile
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("plans", nargs="+")
    parser.add_argument("--device", required=True, help="e.g. cuda, vulkan, local-task")
    args = parser.parse_args(argv)
    program = toolchains.iree_tool("iree-run-module") or "iree-run-module"
    failed = 0
    for path in args.plans:
        what = path
        try:
            plan = from_json(Path(path).read_text(), path)
            what = describe(plan)
            if plan.note:
                print(f"skipped {what}: {plan.note}")
                continue
            with tempfile.TemporaryDirectory() as work:
                wrong = run(plan, program, args.device, Path(work))
        except (OSError, UserError) as e:
            wrong = str(e)
        failed += wrong is not None
        print(f"{'FAILED' if wrong else 'matched'} {what}" + (f": {wrong}" if wrong else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
