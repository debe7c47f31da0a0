"""SCons tool: microbenchmarks of substituted executables beside IREE's own.

Methods:
  env.IreeMicrobenchmarks(declared)   'microbenchmarks': the substituted executables of a
                                      module IreeKernelProject declared
  env.IreeBench(table)                'bench': every microbenchmark, then ``table``

Builders:
  IreeMicrobenchmark     model.mlir + options.flags + substitutions.json + executables.mlir
                         (benchmarks are dumped from it) + executables.ops.mlir (sources)
                         -> microbenchmarks.json (one model and target)
  IreeBenchmarkReport    microbenchmarks.json... -> microbenchmarks.txt (+ .json, .png)

Variables:
  IREE_BENCHMARK_MODULE   the iree-benchmark-module program
  IREE_BENCHMARKFLAGS     its flags (default: iree_kernels.settings)
  IREE_RUN_DEVICE         the device to time on
Both builders always run when asked for; a kernel timed before with the same files,
executable, options, device, flags and tools keeps its timing (``Measurements``, in
``microbenchmarks.measured/``) unless REMEASURE=yes.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Util

from iree_kernels.check import benchmarks, expected_outputs, runtime
from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError, shown
from iree_kernels.ir.program import Program
from iree_kernels.core.files import read_text, write_atomically
from iree_kernels.scons import remote
from iree_kernels.scons.escaping import program
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts
from iree_kernels.module.substitution import read_record
from iree_kernels.release.lock import sha256_file


@reporting_user_errors
def run_microbenchmarks(target, source, env):
    # dump: the front end's program, which benchmarks are dumped from; ops: its executables alone
    model, options, record_file, dump, ops = (str(s) for s in source[:5])
    expected = next((s.get_path() for s in source[4:] if s.get_suffix() == ".toml"), None)
    record = read_record(Path(record_file).read_text())
    work = Path(target[0].abspath).with_suffix("")
    shutil.rmtree(work, ignore_errors=True)
    names = [applied.executable for applied in record.substitutions]
    # Dynamic shapes: timed at the input shapes of the model's expected-output cases.
    found = benchmarks.dump_benchmarks_of(env.subst("$IREE_COMPILE"), Path(dump), options, work,
                                          names, expected_outputs.case_shapes(expected,
                                                                    env["IREE_RUN_TARGET"]),
                                          timeouts(env))
    device = env["IREE_RUN_DEVICE"]
    driver = runtime.device_driver(device)
    available = driver in runtime.available_drivers(env.subst("$IREE_RUN_MODULE"),
                                                    timeouts(env)) \
        or remote.device_elsewhere(env, driver)
    measured = Path(target[0].abspath).with_suffix(".measured")
    kept = Measurements(measured, again=env["REMEASURE"])
    with Program(Path(ops).read_text(), ops) as sources:
        results = [_measure(env, sub, found.get(sub.executable), sources, work, options,
                            device, available, kept, target) for sub in record.substitutions]
    kept.forget_the_rest()
    write_atomically(target[0].abspath, benchmarks.to_json(results))


class Measurements:
    """Timings kept by what was timed (``key``): the benchmark's source, the kernel's flags and
    files, the options, device, flags and tools; a call times again only what changed, or
    everything with REMEASURE=yes. Each is a folder: its modules and result.json."""

    def __init__(self, folder: Path, again: bool) -> None:
        self.folder, self.again, self.used = folder, again, set()

    def key(self, *parts: str | bytes) -> str:
        digest = hashlib.sha256()
        for part in parts:
            data = part.encode() if isinstance(part, str) else part
            digest.update(len(data).to_bytes(8, "little") + data)
        return digest.hexdigest()[:32]

    def place(self, key: str) -> Path:
        self.used.add(key)
        return self.folder / key

    def taken(self, key: str) -> benchmarks.Result | None:
        if self.again:
            return None
        try:
            (result,) = benchmarks.from_json(read_text(self.place(key) / "result.json"))
        except (OSError, ValueError, TypeError):
            return None
        return result

    def keep(self, key: str, result: benchmarks.Result) -> None:
        write_atomically(str(self.place(key) / "result.json"), benchmarks.to_json([result]))

    def forget_the_rest(self) -> None:
        if self.folder.is_dir():
            for entry in self.folder.iterdir():
                if entry.name not in self.used:
                    shutil.rmtree(entry, ignore_errors=True)


def _files_named(flags: list[str]) -> list[str]:
    """The SHA-256 of each file a substitution flag names (NAME=PATH), '' where none is."""
    paths = [Path(flag.rpartition("=")[2]) for flag in flags]
    return [sha256_file(path) if path.is_file() else "" for path in paths]


def _measure(env, sub, found, sources, work, options, device, available, kept=None,
             target=None):
    result = benchmarks.Result(sub.model, sub.target, sub.executable, sub.export, sub.kernel,
                               device=device)
    if found is None:
        result.note = "no benchmark (IREE dumps none where sizes depend on data)"
        return result
    dumped, result.shapes = found
    source = work / f"{dumped.stem}.source.mlir"
    text = benchmarks.with_source(dumped, sources, sub.executable)
    source.write_text(text)
    iree_compile = env.subst("$IREE_COMPILE")
    folder = work
    if kept is not None:
        key = kept.key(text, *sub.flags, *_files_named(sub.flags), Path(options).read_text(),
                       device, env.subst("$IREE_BENCHMARKFLAGS"), result.shapes,
                       str(toolchains.version(iree_compile)),
                       str(toolchains.version(env.subst("$IREE_BENCHMARK_MODULE"))))
        taken = kept.taken(key)
        if taken is not None:
            return taken
        folder = kept.place(key)
        folder.mkdir(parents=True, exist_ok=True)
    plain, substituted = (folder / f"{sub.executable}.plain.vmfb",
                          folder / f"{sub.executable}.vmfb")
    limits = timeouts(env)
    notes, compiled = [], []
    # One executable that does not compile (a wrapped kernel standing in for one IREE cannot
    # compile) is a line in the table; the others are timed.
    for module, flags, whose in ((plain, [], "IREE's executable"),
                                 (substituted, sub.flags, "the kernel")):
        try:
            benchmarks.compile_benchmark(iree_compile, source, options, flags, module, limits)
            compiled.append(module)
        except UserError as e:
            notes.append(f"{whose} does not compile in a benchmark: {_first_error(e)}")
    result.plain_module, result.module = (os.path.relpath(m) if m in compiled else ""
                                          for m in (plain, substituted))
    if compiled and not available:
        notes.append(f"no '{device}' device here")
    if compiled and available:
        program = env.subst("$IREE_BENCHMARK_MODULE")
        flags = env.Split(env.subst("$IREE_BENCHMARKFLAGS"))
        runner = remote.device_runner(env, target, runtime.device_driver(device)) \
            if remote.cluster(env) else None
        if plain in compiled:
            result.plain_us = benchmarks.time_per_dispatch(program, plain, device, flags, limits,
                                                           runner)
        if substituted in compiled:
            result.substituted_us = benchmarks.time_per_dispatch(program, substituted, device,
                                                                 flags, limits, runner)
    result.note = "; ".join(notes)
    if kept is not None and available:          # what was timed, or could not be
        kept.keep(key, result)
    return result


def _first_error(error: UserError) -> str:
    return shown(toolchains.printed_error(error.message) or error.message.splitlines()[0])


@reporting_user_errors
def write_report(target, source, env):
    results = [r for s in source for r in benchmarks.from_json(Path(str(s)).read_text())]
    text = benchmarks.table(results)
    write_atomically(target[0].abspath, text)
    write_atomically(target[1].abspath, benchmarks.to_json(results))
    plotted = benchmarks.plot(results, Path(target[2].abspath))
    print(text + (f"plot: {target[2]}\n" if plotted else ""), end="")


def _report_emitter(target, source, env):
    text = target[0]
    return [text, text.target_from_source("", ".json"), text.target_from_source("", ".png")], source


def declare_microbenchmarks(env, declared: DeclaredModule):
    model = declared.model
    expected = [env.File(f"#{model.expected}")] if model.expected else []
    benchmark = env.IreeMicrobenchmark(declared.folder.File("microbenchmarks.json"),
                                       [model.source, declared.options, declared.record,
                                        declared.executables,
                                        declared.executable_ops,
                                        declared.module, *expected],
                                       IREE_RUN_DEVICE=declared.target.run_device,
                                       IREE_RUN_TARGET=declared.target.name)
    env.AlwaysBuild(benchmark)
    env.Alias("microbenchmarks", benchmark)
    return benchmark


def declare_bench(env, table):
    """'scons bench': every microbenchmark declared so far, then one table (JSON, a plot)."""
    report = env.IreeBenchmarkReport(table, env.Alias("microbenchmarks")[0].sources)
    env.AlwaysBuild(report)
    env.Alias("bench", report)
    return report


def generate(env):
    env.SetDefault(
        IREE_BENCHMARK_MODULE=program(toolchains.iree_tool("iree-benchmark-module") or "iree-benchmark-module"),
        IREE_BENCHMARKFLAGS=SCons.Util.CLVar(settings.default("IREE_BENCHMARKFLAGS")),
        IREE_BENCHCOMSTR="Benchmarking $TARGET",
        IREE_BENCHREPORTCOMSTR="Writing $TARGET",
    )
    env["BUILDERS"]["IreeMicrobenchmark"] = SCons.Builder.Builder(
        action=SCons.Action.Action(run_microbenchmarks, "$IREE_BENCHCOMSTR",
                                   varlist=["IREE_RUN_DEVICE", "IREE_RUN_TARGET",
                                            "IREE_BENCHMARKFLAGS"]),
        suffix=".json")
    env["BUILDERS"]["IreeBenchmarkReport"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_report, "$IREE_BENCHREPORTCOMSTR"),
        suffix=".txt", emitter=_report_emitter)
    env.AddMethod(declare_microbenchmarks, "IreeMicrobenchmarks")
    env.AddMethod(declare_bench, "IreeBench")


def exists(env):
    return env.Detect(toolchains.iree_tool("iree-benchmark-module") or "iree-benchmark-module")
