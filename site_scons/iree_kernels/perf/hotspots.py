"""Where a model's time goes: each executable's time per dispatch, times how often the program dispatches it.

The host program at IREE's executable-sources phase (``executables.mlir``)
holds every dispatch site (``stream.cmd.dispatch``); IREE's executable
benchmarks (``--iree-hal-dump-executable-benchmarks-to``, see ``benchmarks``)
time one dispatch of each executable and static workload. This module counts
the sites, merges the dumped benchmark modules so that one iree-compile run
builds them all, compiles each substituted executable's benchmark again with
its kernel in place, and times them: every timing is the median of the
repetitions, their fastest and slowest kept. A site counts once however often
it runs (inside a loop, or in an initializer that runs once at load); IREE
dumps no benchmark for a site whose workload, push constants or buffer sizes
are dynamic. It declares no build steps.

Not for: ranking, the table, JSON and picture of the result
(``hotspot_report``), declaring the build steps (``site_tools/iree_hotspots.py``).
"""
from __future__ import annotations

import os
import re
import statistics
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.check import benchmarks
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.perf.hotspot_report import NO_PLOT, Hotspot, Report, from_json, write

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


def add_resources(dumped: list[Path], program: str, source: str = "<program>") -> None:
    """Give each dumped benchmark module the ``dense_resource`` data its executable folds in.

    IREE dumps the module without the program's resource section, and it then
    fails to compile ("resource does not exist"): a stem conv with folded
    weights went untimed. ``program``: the executable-sources text they were
    dumped from.
    """
    from iree_kernels.ir.program import Program

    needing = {path: text for path in dumped
               if _RESOURCE_USE in (text := path.read_text()) and _RESOURCES not in text}
    if not needing:
        return
    with Program(program, source) as parsed:       # the resources: read through the bindings
        resources = {e.name: e.resources for e in parsed.executables() if e.resources}
    for path, text in needing.items():
        found = [resources[n] for n in _EXECUTABLE_RE.findall(text) if n in resources]
        if len(found) == 1:                 # IREE dumps one executable a module
            path.write_text(f"{text.rstrip()}\n{found[0]}\n")


_RESOURCE_USE = "dense_resource<"
_RESOURCES = "{-#"
_EXECUTABLE_RE = re.compile(r'hal\.executable (?:(?:private|public|nested) )?@"?([\w$.-]+)"? \{')


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
    by_executable = {s.executable: s.kernel for s in substitutions}   # a derived one: its path
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
         timeouts: toolchains.Timeouts | None = None, runner=None) -> None:
    """Time every row with a module, and its kernel's, one iree-benchmark-module run per module
    (``runner``: as ``benchmarks.repetitions`` takes it)."""
    for row in report.rows:
        if row.module and not available:
            row.note = f"no {report.device} device here"
    if not available:
        return
    for module in sorted({r.module for r in report.rows if r.module}):
        times = benchmarks.repetitions(benchmark_module, Path(module), report.device, flags,
                                        timeouts, runner)
        for row in report.rows:
            if row.module == module:
                _take(row, times.get(row.function))
                row.note = "" if row.us_per_dispatch is not None else "not timed"
    for module in sorted({r.kernel_module for r in report.rows if r.kernel_module}):
        times = benchmarks.repetitions(benchmark_module, Path(module), report.device, flags,
                                        timeouts, runner)
        for row in report.rows:
            if row.kernel_module == module:
                found = times.get(row.function)
                row.kernel_us = statistics.median(found) if found else None
                row.kernel_note = "" if found else "not timed"


def _take(row: Hotspot, times: list[float] | None) -> None:
    row.us_per_dispatch = statistics.median(times) if times else None
    row.us_min, row.us_max = (min(times), max(times)) if times else (None, None)
    row.repetitions = len(times or [])


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
