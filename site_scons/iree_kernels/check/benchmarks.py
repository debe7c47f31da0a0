"""Microbenchmarks of substituted executables beside the ones IREE generated.

``--iree-hal-dump-executable-benchmarks-to`` writes, per executable, a module
that dispatches it in a loop. The dump is taken before substitutions apply, so
each benchmark module is compiled twice, plain and with the executable's
substitution flag, and both are timed with ``iree-benchmark-module``. This
module runs those tools and formats the results; it declares no build steps.
"""
from __future__ import annotations

import json
import shutil
import statistics
from dataclasses import asdict, dataclass
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import remove_quietly

# iree-benchmark-module's flags of 'scons bench' (IREE_BENCHMARKFLAGS)
BENCHMARK_FLAGS = "--benchmark_repetitions=5 --batch_size=100"


@dataclass
class Result:
    model: str
    target: str
    executable: str
    export: str
    kernel: str
    plain_us: float | None = None
    substituted_us: float | None = None
    note: str = ""
    device: str = ""
    plain_module: str = ""       # the compiled benchmark modules, to time them elsewhere
    module: str = ""
    shapes: str = ""             # dynamic shapes: the expected-output case they are taken from

    @property
    def speedup(self) -> float | None:
        if self.plain_us and self.substituted_us:
            return self.plain_us / self.substituted_us
        return None


def dump_benchmarks(iree_compile: str, program: str, flag_files: list[str],
                    directory: Path, timeouts: toolchains.Timeouts | None = None) -> None:
    """Dump the benchmark module of every executable of ``program`` into ``directory``.

    ``program``: at IREE's executable-sources phase. IREE dumps them once the
    executables are configured, before codegen: the compile stops there, so
    executables IREE's codegen fails on get benchmarks too.
    """
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    phase = ["--compile-from=executable-sources", "--compile-to=executable-configurations"]
    toolchains.run([iree_compile, program, *phase, *(f"@{f}" for f in flag_files),
                    f"--iree-hal-dump-executable-benchmarks-to={directory}", "-o", "/dev/null"],
                   file=program, doing="dump IREE's executable benchmarks", timeouts=timeouts)


def dump_benchmarks_of(iree_compile: str, program: Path, options: str, work: Path,
                       names: list[str], cases: list[tuple[str, list, str]] = (),
                       timeouts: toolchains.Timeouts | None = None) -> dict[str, tuple[Path, str]]:
    """The benchmark module IREE dumps for each of ``names``: name -> (its file, where its shapes are from).

    IREE dumps none for a dispatch whose sizes are known only at run time. Where
    only the inputs' shapes leave them so, ``program`` is specialized to the
    input shapes of each of ``cases`` in turn ((function, shapes, what to call
    them)) until it is dumped; its second field then names the case. Names
    IREE dumps nothing for are left out.
    """
    from iree_kernels.core.errors import UserError
    from iree_kernels.ir.program import Program

    dump_benchmarks(iree_compile, str(program), [options], work / "program", timeouts)
    found = {name: (path, "") for name in names
             if (path := benchmark_file(work / "program", name))}
    for number, (function, shapes, label) in enumerate(cases):
        missing = [name for name in names if name not in found]
        if not missing:
            break
        with Program(program.read_text(), str(program)) as specialized:
            try:
                specialized.specialize(function, shapes)
            except UserError:
                continue                  # the case calls another function, or fewer inputs
            staged = work / f"case-{number}.mlir"
            staged.write_text(specialized.text())
        dump_benchmarks(iree_compile, str(staged), [options], work / f"case-{number}", timeouts)
        found.update({name: (path, label) for name in missing
                      if (path := benchmark_file(work / f"case-{number}", name))})
    return found


def benchmark_file(folder: Path, executable: str) -> Path | None:
    """The benchmark module of ``executable`` in ``folder``: module_<executable>_<variant>_benchmark.mlir."""
    from iree_kernels.ir.program import Program

    for path in sorted(folder.glob("module_*_benchmark.mlir")):
        if path.name.startswith(f"module_{executable}_"):
            with Program(path.read_text(), str(path)) as module:
                if executable in module.names():
                    return path
    return None


def with_source(benchmark: Path, sources, name: str) -> str:
    """The benchmark module of ``name`` with the executable's source (from ``sources``, a Program)
    in place of the configured one IREE dumped.

    Compiled again, a dumped executable can fail where its source compiles
    (IREE 3.13 on llvm-cpu: squeezenet's max pools, "large vector sizes").
    """
    from iree_kernels.ir.program import Program

    with Program(benchmark.read_text(), str(benchmark)) as module:
        module.replace(name, sources.executable_text(name), sources.source, visibility="private")
        return module.text()


def compile_benchmark(iree_compile: str, source: Path, options: str, flags: list[str],
                      output: Path, timeouts: toolchains.Timeouts | None = None,
                      runner=None) -> None:
    """``source`` compiled into ``output``; ``runner(argv, *, reads, writes, file, doing,
    timeouts)`` runs iree-compile where given (a build sends it to a worker)."""
    argv = [iree_compile, str(source), f"@{options}", *flags, "-o", str(output)]
    if runner is None:
        toolchains.run(argv, file=str(source), timeouts=timeouts)
    else:
        runner(argv, reads=[source], writes=[output], file=str(source),
               doing=f"compile {output.name}", timeouts=timeouts)


def time_per_dispatch(benchmark_module: str, module: Path, device: str,
                      flags: list[str], timeouts: toolchains.Timeouts | None = None,
                      runner=None) -> float:
    """Median wall time of one dispatch, in microseconds."""
    runs = _iterations(benchmark_module, module, device, flags, timeouts, runner)
    return statistics.median(us for _, us in runs)


def times_per_dispatch(benchmark_module: str, module: Path, device: str,
                       flags: list[str], timeouts: toolchains.Timeouts | None = None) -> dict[str, float]:
    """Median wall time of one dispatch of each benchmark function in ``module``, in microseconds."""
    return {function: statistics.median(times) for function, times in
            repetitions(benchmark_module, module, device, flags, timeouts).items()}


def repetitions(benchmark_module: str, module: Path, device: str, flags: list[str],
                timeouts: toolchains.Timeouts | None = None,
                runner=None) -> dict[str, list[float]]:
    """Each benchmark function's time per dispatch in every repetition, in microseconds."""
    by_function: dict[str, list[float]] = {}
    for function, us in _iterations(benchmark_module, module, device, flags, timeouts, runner):
        by_function.setdefault(function, []).append(us)
    return by_function


def _iterations(benchmark_module: str, module: Path, device: str,
                flags: list[str], timeouts: toolchains.Timeouts | None, runner=None
                ) -> list[tuple[str, float]]:
    """(benchmark function, microseconds per dispatch) of every timed repetition.

    ``runner(argv, *, reads, writes, file, doing, timeouts)`` runs iree-benchmark-module
    (a build sends it to a worker with the device); its JSON is then written to a file
    beside the module (``<module>.benchmark.json``), as what it prints is not only JSON."""
    argv = [benchmark_module, f"--module={module}", f"--device={device}",
            "--benchmark_format=json", *flags]
    if runner is None:
        output = toolchains.run(argv, file=str(module), timeouts=timeouts)
    else:
        written = Path(f"{module}.benchmark.json")
        try:
            runner([*argv, f"--benchmark_out={written}", "--benchmark_out_format=json"],
                   reads=[module], writes=[written], file=str(module),
                   doing=f"time {module}", timeouts=timeouts)
            output = written.read_text(encoding="utf-8")
        finally:
            remove_quietly(written)
    runs = [b for b in json.loads(output)["benchmarks"] if b.get("run_type") == "iteration"]
    scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}
    # run_name: BM_<function>/process_time/real_time
    return [(b["run_name"].removeprefix("BM_").rsplit("/process_time", 1)[0],
             b["real_time"] * scale[b["time_unit"]]) for b in runs]


def table(results: list[Result]) -> str:
    header = ("model", "target", "executable", "kernel", "IREE us", "kernel us", "speedup")
    rows = [header] + [(r.model, r.target, r.executable, r.kernel, _us(r.plain_us),
                        _us(r.substituted_us),
                        f"{r.speedup:.2f}x" if r.speedup else r.note or "-") for r in results]
    return columns(rows)


def columns(rows: list[tuple[str, ...]]) -> str:
    """``rows`` (the first one a header) as left-aligned text columns, a rule under the header."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in rows]
    return "\n".join(lines[:1] + ["-" * len(lines[0])] + lines[1:]) + "\n"


def _us(value: float | None) -> str:
    return f"{value:.2f}" if value is not None else "-"


def to_json(results: list[Result]) -> str:
    return json.dumps([asdict(r) | {"speedup": r.speedup} for r in results], indent=2) + "\n"


def from_json(text: str) -> list[Result]:
    return [Result(**{k: v for k, v in item.items() if k != "speedup"})
            for item in json.loads(text)]


def plot(results: list[Result], path: Path) -> bool:
    """A bar chart of both timings per executable; False where matplotlib is missing."""
    plt = pyplot()
    if plt is None:
        return False
    timed = [r for r in results if r.plain_us and r.substituted_us]
    figure, axes = plt.subplots(figsize=(max(4, 1.6 * len(timed) + 2), 3.5))
    positions = range(len(timed))
    axes.bar([p - 0.2 for p in positions], [r.plain_us for r in timed], 0.4, label="IREE")
    axes.bar([p + 0.2 for p in positions], [r.substituted_us for r in timed], 0.4,
             label="substituted kernel")
    axes.set_xticks(list(positions), [f"{r.model}/{r.target}\n{r.executable}" for r in timed],
                    fontsize=7)
    axes.set_ylabel("microseconds per dispatch")
    axes.legend()
    save_figure(figure, path)
    return True


def pyplot():
    """matplotlib.pyplot drawing to files, or None where matplotlib is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def save_figure(figure, path: Path) -> None:
    """``figure`` as a PNG at ``path``, with no version of matplotlib in it; closes it."""
    figure.tight_layout()
    figure.savefig(path, dpi=120, metadata={"Software": None})
    pyplot().close(figure)


def retime(results: list[Result], benchmark_module: str, flags: list[str]) -> None:
    """Time again every result whose modules exist, on each result's device."""
    for r in results:
        if r.module and Path(r.module).is_file() and Path(r.plain_module).is_file():
            r.plain_us = time_per_dispatch(benchmark_module, Path(r.plain_module), r.device, flags)
            r.substituted_us = time_per_dispatch(benchmark_module, Path(r.module), r.device, flags)
            r.note = ""


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.check.benchmarks RESULTS.json...: time the modules 'scons bench' built.

    For a machine with the device but without the compiler: carry build/ there.
    """
    import argparse
    from iree_kernels.core import toolchains
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+")
    parser.add_argument("--flags", default=BENCHMARK_FLAGS)
    args = parser.parse_args(argv)
    results = [r for path in args.results for r in from_json(Path(path).read_text())]
    program = toolchains.iree_tool("iree-benchmark-module") or "iree-benchmark-module"
    try:
        retime(results, program, args.flags.split())
    except UserError as e:
        print(f"FAILED: {e}")
        return 1
    print(table(results), end="")
    print(to_json(results), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
