"""Where a model's time goes: each executable's time per dispatch, times how often the program dispatches it.

The host program at IREE's executable-sources phase (``executables.mlir``)
holds every dispatch site (``stream.cmd.dispatch``); IREE's executable
benchmarks (``--iree-hal-dump-executable-benchmarks-to``, see ``benchmarks``)
time one dispatch of each executable and static workload. This module counts
the sites, merges the dumped benchmark modules so that one iree-compile run
builds them all, compiles each substituted executable's benchmark again with
its kernel in place, and ranks, formats and plots the result: every timing
is the median of the repetitions, their spread shown, and rows whose totals
lie within each other's spread are ranked as ties. A site counts once
however often it runs (inside a loop, or in an initializer that runs once at
load); IREE dumps no benchmark for a site whose workload, push constants or
buffer sizes are dynamic. It declares no build steps.
"""
from __future__ import annotations

import json
import os
import statistics
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from iree_kernels.check import benchmarks
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError

# The dumped benchmark modules hold configured executables: compiled from the
# start, IREE configures them again and fails on some (llvm-cpu, densenet121:
# "One or more operations with large vector sizes").
COMPILE_FROM = "--compile-from=executable-configurations"
_LOOPS = {"scf.for", "scf.while", "scf.forall", "scf.parallel"}


@dataclass(frozen=True)
class Site:
    """One stream.cmd.dispatch of one entry point."""
    executable: str
    variant: str
    export: str
    workload: tuple[int, ...] | None    # None where a workload value is not a constant
    where: str = ""                     # "in a loop", "in an initializer", or ""


@dataclass
class Hotspot:
    executable: str
    export: str
    dispatches: int
    function: str = ""                  # IREE's benchmark function, where it dumps one
    workload: list[int] | None = None
    module: str = ""                    # the compiled benchmark module holding ``function``
    us_per_dispatch: float | None = None
    substituted_by: str = ""
    note: str = ""
    where: list[str] = field(default_factory=list)
    us_min: float | None = None         # the fastest and slowest repetition, per dispatch
    us_max: float | None = None
    repetitions: int = 0
    kernel_module: str = ""             # the benchmark module with the substituted kernel in place
    kernel_us: float | None = None      # its time per dispatch (median)
    kernel_note: str = ""               # why the kernel has no time

    @property
    def total_us(self) -> float | None:
        return None if self.us_per_dispatch is None else self.us_per_dispatch * self.dispatches

    @property
    def spread(self) -> float | None:
        """Half the range of the repetitions, as a percentage of the median."""
        if self.repetitions < 2 or not self.us_per_dispatch:
            return None
        return 50 * (self.us_max - self.us_min) / self.us_per_dispatch

    @property
    def speedup(self) -> float | None:
        """IREE's time over the substituted kernel's."""
        return self.us_per_dispatch / self.kernel_us if self.kernel_us and self.us_per_dispatch \
            else None


@dataclass
class Report:
    model: str
    target: str
    device: str
    rows: list[Hotspot]
    flags: str = ""                     # iree-benchmark-module's flags


def dispatch_sites(text: str, source: str = "<program>") -> list[Site]:
    """Every dispatch site of the host program in ``text`` (an executable-sources dump)."""
    sites: list[Site] = []
    with _mlir() as ir:
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise UserError(f"cannot parse the program: {e}", file=source) from None

        def visit(op):
            if op.name == "stream.cmd.dispatch":
                workload = _workload(op)
                where = _where(op)
                for entry in ir.ArrayAttr(op.attributes["entry_points"]):
                    ref = ir.SymbolRefAttr(entry).value     # [executable, variant, export]
                    sites.append(Site(*ref[:3], workload, where))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return sites


@contextmanager
def _mlir():
    """The MLIR bindings' ``ir``, inside a context that reads any dialect."""
    from iree.compiler import ir

    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        yield ir


def _workload(op) -> tuple[int, ...] | None:
    from iree.compiler import ir

    count = ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"])[0]
    values = []
    for operand in list(op.operands)[:count]:
        owner = operand.owner
        if not isinstance(owner, (ir.Operation, ir.OpView)) or \
                owner.operation.name != "arith.constant":
            return None
        values.append(ir.IntegerAttr(owner.operation.attributes["value"]).value)
    return tuple(values)


def _where(op) -> str:
    """Whether ``op`` runs in a loop (scf, or a cycle of blocks) or in an initializer."""
    op = op.operation
    while op.parent is not None:
        if op.parent.name in _LOOPS or _in_cycle(op.block):
            return "in a loop"
        if op.parent.name == "util.initializer":
            return "in an initializer"
        op = op.parent
    return ""


def _in_cycle(block) -> bool:
    seen, todo = [], _successors(block)
    while todo:
        found = todo.pop()
        if found == block:
            return True
        if not any(found == s for s in seen):
            seen.append(found)
            todo.extend(_successors(found))
    return False


def _successors(block) -> list:
    operations = block.operations
    return list(operations[len(operations) - 1].operation.successors) if len(operations) else []


def benchmark_function(site: Site) -> str:
    """The function IREE's benchmark dump names after ``site``'s entry point and workload."""
    name = f"{site.executable}_{site.variant}_{site.export}"
    return name + ("_" + "x".join(map(str, site.workload)) if site.workload else "")


def count(sites: list[Site]) -> list[Hotspot]:
    """One row per entry point and workload, with how many sites dispatch it, in program order."""
    rows: dict[tuple, Hotspot] = {}
    for site in sites:
        key = (site.executable, site.variant, site.export, site.workload)
        row = rows.get(key)
        if row is None:
            row = rows[key] = Hotspot(
                site.executable, site.export, 0,
                benchmark_function(site) if site.workload is not None else "",
                list(site.workload) if site.workload is not None else None)
        row.dispatches += 1
        if site.where and site.where not in row.where:
            row.where.append(site.where)
    return list(rows.values())


def merge_benchmarks(texts: list[str]) -> str:
    """The dumped benchmark modules as one module (what they share, e.g. the device global, once)."""
    with _mlir() as ir:
        merged = ir.Module.parse(texts[0])
        symbols = {_symbol(op): _definition(op) for op in merged.body.operations if _symbol(op)}
        parsed = [ir.Module.parse(text) for text in texts[1:]]   # alive until merged is printed
        for module in parsed:
            for op in list(module.body.operations):
                name = _symbol(op)
                if name in symbols:
                    if symbols[name] != _definition(op):
                        raise ValueError(f"two benchmark modules define @{name} differently")
                    continue
                if name:
                    symbols[name] = _definition(op)
                merged.body.append(op.detach_from_parent())
        return str(merged)


def _definition(op) -> tuple:
    """What a symbol op is, comparable across modules (printing an op may use attribute aliases)."""
    operation = op.operation
    if len(operation.regions):          # executables, functions: each module has its own
        return (operation.name, id(operation))
    return (operation.name, sorted((a, str(operation.attributes[a])) for a in operation.attributes))


def _symbol(op) -> str:
    from iree.compiler import ir

    attributes = op.operation.attributes
    return ir.StringAttr(attributes["sym_name"]).value if "sym_name" in attributes else ""


def compile_benchmarks(iree_compile: str, dumped: list[Path], options: str, folder: Path,
                       jobs: int = 1, timeouts: toolchains.Timeouts | None = None
                       ) -> tuple[dict[str, str], dict[str, str]]:
    """Compile the dumped benchmark modules into ``folder``.

    All in one module where they all compile; else one module each, ``jobs``
    at a time. Returns ({function: module}, {dumped file: why it did not compile}).
    """
    functions = {path: _functions(path.read_text()) for path in dumped}
    if not dumped:
        return {}, {}
    merged_source = folder / "all.mlir"
    try:
        merged_source.write_text(merge_benchmarks([p.read_text() for p in dumped]))
        module = folder / "all.vmfb"
        benchmarks.compile_benchmark(iree_compile, merged_source, options, [COMPILE_FROM], module,
                                     timeouts)
        return {f: str(module) for fs in functions.values() for f in fs}, {}
    except (UserError, ValueError):
        pass

    def compile_one(path: Path) -> tuple[Path, str]:
        module = folder / f"{path.stem}.vmfb"
        try:
            benchmarks.compile_benchmark(iree_compile, path, options, [COMPILE_FROM], module,
                                         timeouts)
        except UserError as e:
            return path, f"IREE cannot compile its benchmark: {first_error(str(e))}"
        return path, str(module)

    modules, failures = {}, {}
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        for path, result in pool.map(compile_one, dumped):
            if result.endswith(".vmfb"):
                modules.update({f: result for f in functions[path]})
            else:
                failures.update({f: result for f in functions[path]})
    return modules, failures


def _functions(text: str) -> list[str]:
    """The benchmark functions of a dumped module: its public util.func ops."""
    with _mlir() as ir:
        module = ir.Module.parse(text)
        return [_symbol(op) for op in module.body.operations
                if op.operation.name == "util.func" and "iree.reflection" in op.operation.attributes]


def first_error(message: str) -> str:
    """The first 'error:' line of a tool's output, without its file and position."""
    for line in message.splitlines():
        if "error:" in line:
            return line.split("error:", 1)[1].strip()
    return message.splitlines()[0] if message else ""


def attach(rows: list[Hotspot], modules: dict[str, str], failures: dict[str, str]) -> None:
    """Each row's compiled benchmark module, or why it has none."""
    for row in rows:
        if row.function in modules:
            row.module = os.path.relpath(modules[row.function])
        elif row.function in failures:
            row.note = failures[row.function]
        else:
            row.note = "no benchmark: dynamic shapes"


def mark_substituted(rows: list[Hotspot], substitutions, kernels: dict | None = None) -> None:
    """Name each row's kernel, from substitution.Record.substitutions, and attach its benchmark
    module from ``kernels`` (compile_kernels: executable -> {"module": ..., "note": ...})."""
    by_executable = {s.executable: s.file for s in substitutions}
    for row in rows:
        row.substituted_by = by_executable.get(row.executable, "")
        compiled = (kernels or {}).get(row.executable, {}) if row.substituted_by else {}
        row.kernel_module = compiled.get("module", "")
        row.kernel_note = compiled.get("note", "")


def compile_kernels(iree_compile: str, dumped: Path, program: Path, options: str,
                    substitutions, folder: Path, timeouts: toolchains.Timeouts | None = None
                    ) -> dict[str, dict[str, str]]:
    """Each substituted executable's dumped benchmark compiled again with its kernel in place.

    As ``scons bench`` does: the dumped module gets the executable's source
    from ``program`` (executables.ops.mlir: the executables alone, with the
    resources they use, not the weights) and is compiled with the substitution's
    flag, into ``folder``. Returns executable -> {"module": path} or {"note": why none}.
    """
    from iree_kernels.ir.program import Program

    found: dict[str, dict[str, str]] = {}
    with Program(program.read_text(), str(program)) as sources:
        for sub in substitutions:
            path = benchmarks.benchmark_file(dumped, sub.executable)
            if path is None:
                found[sub.executable] = {"note": "no benchmark: dynamic shapes"}
                continue
            source = folder / f"{sub.executable}.source.mlir"
            module = folder / f"{sub.executable}.vmfb"
            try:
                source.write_text(benchmarks.with_source(path, sources, sub.executable))
                benchmarks.compile_benchmark(iree_compile, source, options, sub.flags, module,
                                             timeouts)
            except UserError as e:
                found[sub.executable] = {
                    "note": f"the kernel's benchmark does not compile: {first_error(str(e))}"}
                continue
            found[sub.executable] = {"module": os.path.relpath(module)}
    return found


def time(report: Report, benchmark_module: str, flags: list[str], available: bool,
         timeouts: toolchains.Timeouts | None = None) -> None:
    """Time every row with a module, and its kernel's, one iree-benchmark-module run per module."""
    for row in report.rows:
        if row.module and not available:
            row.note = f"no {report.device} device here"
    if not available:
        return
    for module in sorted({r.module for r in report.rows if r.module}):
        times = benchmarks.repetitions(benchmark_module, Path(module), report.device, flags,
                                        timeouts)
        for row in report.rows:
            if row.module == module:
                _take(row, times.get(row.function))
                row.note = "" if row.us_per_dispatch is not None else "not timed"
    for module in sorted({r.kernel_module for r in report.rows if r.kernel_module}):
        times = benchmarks.repetitions(benchmark_module, Path(module), report.device, flags,
                                        timeouts)
        for row in report.rows:
            if row.kernel_module == module:
                found = times.get(row.function)
                row.kernel_us = statistics.median(found) if found else None
                row.kernel_note = "" if found else "not timed"


def _take(row: Hotspot, times: list[float] | None) -> None:
    row.us_per_dispatch = statistics.median(times) if times else None
    row.us_min, row.us_max = (min(times), max(times)) if times else (None, None)
    row.repetitions = len(times or [])


def ranked(rows: list[Hotspot]) -> list[Hotspot]:
    """Timed rows by total time, most first; then the others by dispatches; ties in program order."""
    return sorted(rows, key=lambda r: (r.total_us is None, -(r.total_us or 0), -r.dispatches))


def ranks(rows: list[Hotspot]) -> list[str]:
    """The rank of each of ``rows`` (ranked): rows whose totals' ranges (fastest to slowest
    repetition) overlap, one after another, share the first one's rank, marked '=' ("2=");
    untimed rows have '-'."""
    found: list[str] = []
    first = 0
    for number, row in enumerate(rows):
        if row.total_us is None:
            found.append("-")
            continue
        if number == 0 or not _overlaps(rows[number - 1], row):
            first = number
        found.append(str(first + 1))
    shared = {rank for rank in found if rank != "-" and found.count(rank) > 1}
    return [rank + "=" if rank in shared else rank for rank in found]


def _overlaps(higher: Hotspot, lower: Hotspot) -> bool:
    """Whether ``lower``'s slowest total reaches ``higher``'s fastest (one repetition: equal)."""
    def low(r):
        return (r.us_min if r.us_min is not None else r.us_per_dispatch) * r.dispatches

    def high(r):
        return (r.us_max if r.us_max is not None else r.us_per_dispatch) * r.dispatches
    return high(lower) >= low(higher)


def shares(rows: list[Hotspot]) -> list[float | None]:
    """Each row's percentage of the timed total."""
    total = sum(r.total_us for r in rows if r.total_us is not None)
    return [None if r.total_us is None or not total else 100 * r.total_us / total for r in rows]


def table(report: Report) -> str:
    rows = ranked(report.rows)
    timed = [r for r in rows if r.total_us is not None]
    header = ("rank", "executable", "export", "dispatches", "us/dispatch", "spread", "total us",
              "share %", "substituted by", "kernel us", "IREE/kernel", "note")
    lines = [header]
    for rank, row, share in zip(ranks(rows), rows, shares(rows)):
        note = "; ".join(filter(None, [row.note, row.kernel_note, *row.where]))
        lines.append((rank, row.executable, row.export, str(row.dispatches),
                      _number(row.us_per_dispatch), _spread(row.spread), _number(row.total_us),
                      _number(share, 1), row.substituted_by or "-", _number(row.kernel_us),
                      f"{row.speedup:.2f}x" if row.speedup else "-", note or "-"))
    total = sum(r.total_us for r in timed)
    with_kernels = sum((r.kernel_us if r.kernel_us else r.us_per_dispatch) * r.dispatches
                       for r in timed)
    counted = max((r.repetitions for r in timed), default=0)
    title = (f"{report.model} on {report.target} ({report.device}): "
             f"{sum(r.dispatches for r in rows)} dispatch sites, {len(rows)} entry points, "
             f"{len(timed)} timed, {total:.2f} us in all with IREE's executables"
             + (f", {with_kernels:.2f} us with the substituted kernels"
                if any(r.kernel_us for r in timed) else "") + "\n"
             "(a dispatch site counts once, in a loop too; times are medians of "
             + (f"{counted} repetitions, spread: half their range; '=': ranks within it"
                if counted > 1 else "1 repetition: no spread, no ties told (IREE_HOTSPOTFLAGS)")
             + "; IREE's executables rank, the kernel's time beside)\n")
    return title + benchmarks.columns(lines)


def _number(value: float | None, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if value is not None else "-"


def _spread(value: float | None) -> str:
    return f"±{value:.1f}%" if value is not None else "-"


# What to_json adds to each row, computed: from_json leaves it out.
_COMPUTED = ("total_us", "share", "rank", "spread", "speedup")


def to_json(report: Report) -> str:
    rows = ranked(report.rows)
    items = [asdict(r) | {"total_us": r.total_us, "share": share, "rank": rank,
                          "spread": r.spread, "speedup": r.speedup}
             for r, share, rank in zip(rows, shares(rows), ranks(rows))]
    return json.dumps({"model": report.model, "target": report.target, "device": report.device,
                       "flags": report.flags, "rows": items}, indent=2) + "\n"


def from_json(text: str) -> Report:
    data = json.loads(text)
    rows = [Hotspot(**{k: v for k, v in item.items() if k not in _COMPUTED})
            for item in data["rows"]]
    return Report(data["model"], data["target"], data["device"], rows, data.get("flags", ""))


def plot(report: Report, path: Path, top: int = 25) -> bool:
    """Where the time goes, as a Pareto chart of the ``top`` timed rows: each one's share of
    the total (IREE's executable; beside it, the substituted kernel's time as a share of the
    same total) and the cumulative share. False where matplotlib is missing."""
    plt = benchmarks.pyplot()
    if plt is None:
        return False
    timed = [r for r in ranked(report.rows) if r.total_us is not None]
    total = sum(r.total_us for r in timed) or 1.0
    rows = timed[:top]
    figure, axes = plt.subplots(figsize=(max(6.0, 0.42 * len(rows) + 2.5), 4.8))
    positions = list(range(len(rows)))
    iree = [100 * r.total_us / total for r in rows]
    # The repetitions' range, as error bars (none where one repetition was timed).
    low = [100 * (r.us_per_dispatch - (r.us_min if r.us_min is not None else r.us_per_dispatch))
           * r.dispatches / total for r in rows]
    high = [100 * ((r.us_max if r.us_max is not None else r.us_per_dispatch) - r.us_per_dispatch)
            * r.dispatches / total for r in rows]
    axes.bar([p - 0.2 for p in positions], iree, 0.4, yerr=[low, high], capsize=2,
             color="tab:blue", label="IREE's executable (bars: fastest to slowest repetition)")
    kernels = [(p, 100 * r.kernel_us * r.dispatches / total)
               for p, r in zip(positions, rows) if r.kernel_us]
    if kernels:
        axes.bar([p + 0.2 for p, _ in kernels], [s for _, s in kernels], 0.4,
                 color="tab:green", label="substituted kernel")
    cumulative, running = [], 0.0
    for share in iree:
        running += share
        cumulative.append(running)
    axes.plot(positions, cumulative, color="tab:red", marker="o", markersize=3,
              label="cumulative share (IREE's)")
    axes.set_ylim(0, 100)
    axes.set_ylabel("% of the timed total per program run")
    names = [f"{rank} {r.export}{'*' if r.substituted_by else ''}"
             for rank, r in zip(ranks(timed), rows)]
    axes.set_xticks(positions, names, rotation=60, ha="right", fontsize=6)
    axes.legend(fontsize=7, loc="center right")
    shown = "" if len(rows) == len(timed) else f", the first {len(rows)} of {len(timed)}"
    axes.set_title(f"{report.model} on {report.target} ({report.device}): "
                   f"{total:.1f} us in all{shown}; * substituted", fontsize=9)
    benchmarks.save_figure(figure, path)
    return True


NO_PLOT = ("no picture: matplotlib is missing (pip install matplotlib, or the extra: "
           "iree-kernels[plots])")


def write(report: Report, text_path: Path) -> tuple[str, bool]:
    """The report as text, JSON and PNG beside ``text_path``; the text, and whether the PNG was
    drawn (where matplotlib is missing there is none, and an older one is removed)."""
    from iree_kernels.core.files import write_atomically

    text = table(report)
    write_atomically(text_path, text)
    write_atomically(text_path.with_suffix(".json"), to_json(report))
    png = text_path.with_suffix(".png")
    plotted = plot(report, png)
    if not plotted and png.exists():
        png.unlink()
    return text, plotted


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.perf.hotspots HOTSPOTS.json...: time the modules 'scons hotspots' built.

    For a machine with the device but without the compiler: carry build/ there,
    run this from the same folder scons ran in. Rewrites each report's .txt,
    .json and .png.
    """
    import argparse
    from iree_kernels.check import runtime
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+")
    parser.add_argument("--flags", default=None,
                        help="iree-benchmark-module flags (default: those scons used)")
    args = parser.parse_args(argv)
    program = toolchains.iree_tool("iree-benchmark-module") or "iree-benchmark-module"
    drivers = runtime.available_drivers(toolchains.iree_tool("iree-run-module") or "iree-run-module")
    for path in map(Path, args.reports):
        report = from_json(path.read_text())
        flags = args.flags if args.flags is not None else report.flags
        report.flags = flags
        try:
            time(report, program, flags.split(), runtime.device_driver(report.device) in drivers)
        except UserError as e:
            print(f"FAILED: {e}")
            return 1
        text, plotted = write(report, path.with_suffix(".txt"))
        print(text + ("" if plotted else NO_PLOT + "\n"), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
