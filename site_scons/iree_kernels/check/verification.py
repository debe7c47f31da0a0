"""Per-executable differential checks: IREE's executable and its substitute, run on the same bytes.

IREE's benchmark dump (``--iree-hal-dump-executable-benchmarks-to``) writes,
per executable and workload, a module that packs the dispatch's bindings into
one buffer and dispatches it in a loop. :func:`harness` turns each such
benchmark function into one that dispatches once on a buffer it is given and
returns it, so ``iree-run-module`` can feed it seeded values and write back
what the executable left there. IREE's dump keeps one dispatch site per
workload (the last); an executable the program dispatches at several sites
(its binding offsets passed as push constants) gets one function per site,
with that site's push constants and binding lengths, read from the program
(``Program.dispatch_sites``).

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

This module runs iree-compile and iree-run-module through ``toolchains.run``;
it declares no build steps.
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from iree_kernels.core import toolchains
from iree_kernels.check.benchmarks import with_source
from iree_kernels.check.comparison import Tolerance, mismatch
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Subspan

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


_DISPATCH_RE = re.compile(r"^(?P<indent>[ \t]*)hal\.command_buffer\.dispatch<.*?"
                          r"bindings\(\[.*?\]\)", re.M | re.S)
_I32_RE = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (-?\d+) : i32$", re.M)
_PACKING = 256          # IREE's benchmarks place each binding at this alignment


@dataclass
class Case:
    """One dispatch of one executable: a function of the harness module."""
    function: str
    bindings: list[tuple[int, int]]       # per binding: (offset, length) in the one buffer
    constants: tuple = ()                 # the push constants' values (None: not known)
    site: str = ""                        # which dispatch site of the program, for messages
    elements: tuple = ()                  # per binding, the element type of all its tensors, or ""

    @property
    def size(self) -> int:
        return max((offset + length for offset, length in self.bindings), default=0)


def harness(benchmark: str, origin: str, sites: dict | None = None) -> tuple[str, list[Case]]:
    """The benchmark module ``benchmark`` (its text) rewritten to dispatch once on a given buffer.

    ``sites``: per benchmark function, the program's dispatch sites it stands
    for (``program.DispatchSite``); where given, the function becomes one per
    site, each with that site's push constants and binding lengths.
    """
    cases, pieces, last = [], [], 0
    for found in _FUNCTION_RE.finditer(benchmark):
        name, body = found.group("name"), found.group("body")
        loads = re.findall(r"^(\s*)(%[\w.$-]+) = util\.global\.load @\S+ : !hal\.buffer$",
                           body, re.M)
        counts = re.findall(rf"^\s*(%[\w.$-]+) = arith\.index_cast {re.escape(found.group('count'))}"
                            r" : i32 to index$", body, re.M)
        dispatches = list(_DISPATCH_RE.finditer(body))
        if len(loads) != 1 or len(counts) != 1 or body.count("util.return\n") != 1 or \
                len(dispatches) != 1:
            raise UserError(f"IREE's benchmark of '{name}' is not in the form "
                            "this check reads (one buffer, one loop, one dispatch, one return); "
                            "was it written by another IREE version?", file=origin)
        constants = {n: int(value) for n, value in _CONSTANT_RE.findall(body)}
        try:
            bindings = [(constants[o], constants[n])
                        for o, n in _BINDING_RE.findall(dispatches[0].group(0))]
        except KeyError:
            raise UserError(f"IREE's benchmark of '{name}' binds ranges that are "
                            "not constants", file=origin) from None
        words = {n: int(value) for n, value in _I32_RE.findall(body)}
        pushed = re.search(r"constants\(\[([^\]]*)\]\)", dispatches[0].group(0))
        own = tuple(words.get(n.strip()) for n in pushed.group(1).split(",")) if pushed else ()
        (indent, buffer), = loads
        body = re.sub(r"^\s*%[\w.$-]+ = util\.global\.load @\S+ : !hal\.buffer$",
                      lambda _: f"{indent}{buffer} = hal.buffer_view.buffer<{_INPUT} : "
                                "!hal.buffer_view> : !hal.buffer", body, count=1, flags=re.M)
        body = re.sub(r"^(\s*)(%[\w.$-]+) = arith\.index_cast \S+ : i32 to index$",
                      lambda m: f"{m.group(1)}{m.group(2)} = arith.constant 1 : index",
                      body, count=1, flags=re.M)
        body = body.replace("util.return\n", f"util.return {_INPUT} : !hal.buffer_view\n")
        pieces.append(benchmark[last:found.start()])
        per_site = _distinct((sites or {}).get(name, []))
        if len(per_site) < 2:
            cases.append(Case(name, bindings, own))
            pieces.append(_function(name, found.group("attrs"), body))
        for number, (site, count) in enumerate(per_site if len(per_site) > 1 else ()):
            function = _renamed(name, f"_site{site.number}")
            placed = _packed(site.lengths)
            cases.append(Case(function, placed, site.constants, site.describe(count)))
            pieces.append("\n" * bool(number) + _function(
                function, found.group("attrs"), _at_site(body, site, placed)))
        last = found.end()
    if not cases:
        raise UserError("IREE's benchmark module has no benchmark function", file=origin)
    return "".join(pieces) + benchmark[last:], cases


def _function(name: str, attrs: str, body: str) -> str:
    return (f"  util.func public @{name}({_INPUT}: !hal.buffer_view) -> "
            f"!hal.buffer_view{attrs}{{\n{body}  }}")


def _renamed(name: str, suffix: str) -> str:
    return f"{name[:-1]}{suffix}\"" if name.endswith('"') else f"{name}{suffix}"


def _distinct(sites: list) -> list:
    """(site, how many sites there are) for each static site passing different values."""
    seen, out = set(), []
    for site in sites:
        if site.static and (site.constants, site.lengths) not in seen:
            seen.add((site.constants, site.lengths))
            out.append(site)
    return [(site, len(sites)) for site in out]


def _packed(lengths) -> list[tuple[int, int]]:
    """Bindings of these lengths placed one after another, as IREE's benchmarks place them."""
    placed, offset = [], 0
    for length in lengths:
        placed.append((offset, length))
        offset = -(-(offset + length) // _PACKING) * _PACKING
    return placed


def _at_site(body: str, site, placed: list[tuple[int, int]]) -> str:
    """``body`` dispatching with ``site``'s push constants and the bindings ``placed``."""
    dispatch = _DISPATCH_RE.search(body)
    indent = dispatch.group("indent")
    values = [f"{indent}%iree_kernels_site_c{i} = arith.constant {text}\n"
              for i, text in enumerate(site.constant_texts)]
    values += [f"{indent}%iree_kernels_site_b{i}_{part} = arith.constant {n} : index\n"
               for i, binding in enumerate(placed) for part, n in zip(("at", "length"), binding)]
    numbered = iter(range(len(placed)))

    def rebind(m):
        i = next(numbered)
        return f"{m.group(1)}[%iree_kernels_site_b{i}_at, %iree_kernels_site_b{i}_length]"
    text = re.sub(r"(\(%[\w.$-]+ : !hal\.buffer\))\[%[\w.$-]+, %[\w.$-]+\]", rebind,
                  dispatch.group(0))
    pushed = ", ".join(f"%iree_kernels_site_c{i}" for i in range(len(site.constant_texts)))
    text = re.sub(r"constants\(\[[^\]]*\]\)", lambda _: f"constants([{pushed}])", text)
    return body[:dispatch.start()] + "".join(values) + text + body[dispatch.end():]


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
    cases: list[dict] = field(default_factory=list)   # Case's fields, and regions
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
    from iree_kernels.ir.executables import read_executables
    from iree_kernels.ir.program import Program

    found = read_executables(program_text, program)
    out = {}
    with Program(program_text, program) as sources:
        sites = sources.dispatch_sites()
        for name in names:
            if name not in dumped:
                out[name] = {"note": "IREE dumps no benchmark for it (dynamic shapes or "
                                     "push constants computed at run time)"}
                continue
            bench, shapes = dumped[name]
            text = with_source(bench, sources, name)
            text, cases = harness(text, str(bench), _by_function(text, sites.get(name, [])))
            subspans = found[name].subspans
            out[name] = {"harness": text, "shapes": shapes, "cases": []}
            for c in cases:
                c.elements = binding_elements(subspans, len(c.bindings))
                out[name]["cases"].append({**asdict(c), "regions": [
                    asdict(r) for r in regions(c, subspans)]})
    return out


def _by_function(benchmark: str, sites: list) -> dict[str, list]:
    """The dispatch sites each benchmark function of ``benchmark`` stands for: IREE names
    them ``<executable>_<variant>_<export>[_<workload>]``, one per workload."""
    by_function = {}
    for found in _FUNCTION_RE.finditer(benchmark):
        name = found.group("name").strip('"')
        by_function[found.group("name")] = [
            s for s in sites if name.endswith(s.export + "".join(
                f"{'_' if i == 0 else 'x'}{w}" for i, w in enumerate(s.workload)))]
    return by_function


def run(plan: Plan, run_module: str, device: str, work: Path,
        timeouts: toolchains.Timeouts | None = None) -> str | None:
    """Run both modules of ``plan`` on ``device`` and compare; why they differ, or None."""
    tolerance = Tolerance(**plan.tolerance)
    work.mkdir(parents=True, exist_ok=True)
    for number, case in enumerate(plan.cases):
        c = Case(case["function"], [tuple(b) for b in case["bindings"]],
                 tuple(case.get("constants", ())), case.get("site", ""),
                 tuple(case.get("elements", ())))
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
                           f"{plan.executable}", timeouts)
            outputs[who] = np.load(written).reshape(-1).view(np.uint8)
        wrong = compare(c, tensors, start, outputs["iree"], outputs["kernel"], tolerance)
        if wrong:
            if c.site:
                return f"at {c.site}: {wrong}"
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
    """python -m iree_kernels.check.verification PLAN.verify.json...: run differential checks built elsewhere.

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
