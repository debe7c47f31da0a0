"""Where a model's time goes: each executable's time per dispatch, times how often the program dispatches it.

The host program at IREE's executable-sources phase (``executables.mlir``)
holds every dispatch site (``stream.cmd.dispatch``); IREE's executable
benchmarks (``--iree-hal-dump-executable-benchmarks-to``, see ``benchmarks``)
time one dispatch of each executable and static workload. This module counts
the sites, merges the dumped benchmark modules so that one iree-compile run
builds them all, and ranks, formats and plots the result. A site counts once
however often it runs (inside a loop, or in an initializer that runs once at
load); IREE dumps no benchmark for a site whose workload, push constants or
buffer sizes are dynamic. It declares no build steps.
"""
from __future__ import annotations

import json
import os
from contextlib import contextmanager
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from . import benchmarks, toolchains
from .errors import UserError

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

    @property
    def total_us(self) -> float | None:
        return None if self.us_per_dispatch is None else self.us_per_dispatch * self.dispatches


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


def mark_substituted(rows: list[Hotspot], substitutions) -> None:
    """Name each row's kernel, from substitution.Record.substitutions."""
    by_executable = {s.executable: s.kernel for s in substitutions}
    for row in rows:
        row.substituted_by = by_executable.get(row.executable, "")


def time(report: Report, benchmark_module: str, flags: list[str], available: bool,
         timeouts: toolchains.Timeouts | None = None) -> None:
    """Time every row with a module, one iree-benchmark-module run per module."""
    for row in report.rows:
        if row.module and not available:
            row.note = f"no {report.device} device here"
    if not available:
        return
    for module in sorted({r.module for r in report.rows if r.module}):
        times = benchmarks.times_per_dispatch(benchmark_module, Path(module), report.device, flags,
                                              timeouts)
        for row in report.rows:
            if row.module == module:
                row.us_per_dispatch = times.get(row.function)
                row.note = "" if row.us_per_dispatch is not None else "not timed"


def ranked(rows: list[Hotspot]) -> list[Hotspot]:
    """Timed rows by total time, most first; then the others by dispatches; ties in program order."""
    return sorted(rows, key=lambda r: (r.total_us is None, -(r.total_us or 0), -r.dispatches))


def shares(rows: list[Hotspot]) -> list[float | None]:
    """Each row's percentage of the timed total."""
    total = sum(r.total_us for r in rows if r.total_us is not None)
    return [None if r.total_us is None or not total else 100 * r.total_us / total for r in rows]


def table(report: Report) -> str:
    rows = ranked(report.rows)
    timed = [r for r in rows if r.total_us is not None]
    header = ("rank", "executable", "export", "dispatches", "us/dispatch", "total us", "share %",
              "substituted by", "note")
    lines = [header]
    for rank, (row, share) in enumerate(zip(rows, shares(rows)), 1):
        note = "; ".join(filter(None, [row.note, *row.where]))
        lines.append((str(rank) if row.total_us is not None else "-", row.executable, row.export,
                      str(row.dispatches), _number(row.us_per_dispatch), _number(row.total_us),
                      _number(share, 1), row.substituted_by or "-", note or "-"))
    total = sum(r.total_us for r in timed)
    title = (f"{report.model} on {report.target} ({report.device}): "
             f"{sum(r.dispatches for r in rows)} dispatch sites, {len(rows)} entry points, "
             f"{len(timed)} timed, {total:.2f} us in all\n"
             "(a dispatch site counts once, in a loop too; times are IREE's own executables)\n")
    return title + benchmarks.columns(lines)


def _number(value: float | None, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if value is not None else "-"


def to_json(report: Report) -> str:
    rows = ranked(report.rows)
    items = [asdict(r) | {"total_us": r.total_us, "share": share}
             for r, share in zip(rows, shares(rows))]
    return json.dumps({"model": report.model, "target": report.target, "device": report.device,
                       "flags": report.flags, "rows": items}, indent=2) + "\n"


def from_json(text: str) -> Report:
    data = json.loads(text)
    rows = [Hotspot(**{k: v for k, v in item.items() if k not in ("total_us", "share")})
            for item in data["rows"]]
    return Report(data["model"], data["target"], data["device"], rows, data.get("flags", ""))


def plot(report: Report, path: Path, top: int = 25) -> bool:
    """A bar chart of the ``top`` timed rows' total time; False where matplotlib is missing."""
    plt = benchmarks.pyplot()
    if plt is None:
        return False
    rows = [r for r in ranked(report.rows) if r.total_us is not None][:top]
    figure, axes = plt.subplots(figsize=(9, max(2.5, 0.32 * len(rows) + 1.2)))
    positions = list(range(len(rows)))[::-1]
    colors = ["tab:green" if r.substituted_by else "tab:blue" for r in rows]
    axes.barh(positions, [r.total_us for r in rows], color=colors)
    axes.set_yticks(positions, [f"{r.export} x{r.dispatches}" for r in rows], fontsize=7)
    axes.set_xlabel("microseconds per program run (green: substituted)")
    axes.set_title(f"{report.model} on {report.target} ({report.device})", fontsize=9)
    benchmarks.save_figure(figure, path)
    return True


def write(report: Report, text_path: Path) -> str:
    """The report as text, JSON and PNG beside ``text_path``; returns the text."""
    from .files import write_atomically

    text = table(report)
    write_atomically(text_path, text)
    write_atomically(text_path.with_suffix(".json"), to_json(report))
    png = text_path.with_suffix(".png")
    if not plot(report, png) and png.exists():
        png.unlink()
    return text


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.hotspots HOTSPOTS.json...: time the modules 'scons hotspots' built.

    For a machine with the device but without the compiler: carry build/ there,
    run this from the same folder scons ran in. Rewrites each report's .txt,
    .json and .png.
    """
    import argparse
    from . import runtime
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
        print(write(report, path.with_suffix(".txt")), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
