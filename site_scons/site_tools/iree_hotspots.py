"""SCons tool: the hotspot report of one model and target (library: iree_kernels.perf.hotspots,
hotspot_report).

Builders:
  IreeHotspotBenchmarks  executables.mlir + options.flags + spec
                         -> hotspots/benchmarks.json: every dispatch site counted, IREE's
                         executable benchmarks dumped (from executables.mlir: the front
                         end does not run again) and compiled beside it
  IreeHotspotKernels     benchmarks.json + executables.ops.mlir + options.flags + substitutions.json
                         + the module (for its kernels) -> hotspots/kernels.json: each
                         substituted executable's dumped benchmark compiled again with its
                         kernel in place (as scons bench does), beside IREE's
  IreeHotspotReport      benchmarks.json + substitutions.json [+ kernels.json]
                         -> hotspots.txt (+ .json, .png): each benchmark and kernel timed on
                         the target's device, ranked; always runs (a measurement is not up to
                         date)

Variables: IREE_BENCHMARK_MODULE (tool iree_bench), IREE_HOTSPOTFLAGS (its flags here),
IREE_RUN_DEVICE (the device to time on).
"""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Script
import SCons.Util

from iree_kernels.check import benchmarks, runtime
from iree_kernels.perf import hotspot_report, hotspots
from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.core.files import write_atomically
from iree_kernels.scons import remote
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.nodes import spec_value
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts
from iree_kernels.module.substitution import read_record


@reporting_user_errors
def compile_hotspot_benchmarks(target, source, env):
    program, options = str(source[0]), str(source[1])
    rows = hotspots.count(hotspots.dispatch_sites(Path(program).read_text(), program))
    folder = Path(target[0].abspath).parent
    dumped = folder / "dumped"
    benchmarks.dump_benchmarks(env.subst("$IREE_COMPILE"), program, [options], dumped,
                               timeouts(env))
    hotspots.add_resources(sorted(dumped.glob("*.mlir")), Path(program).read_text(), program)
    compiled = folder / "compiled"
    shutil.rmtree(compiled, ignore_errors=True)
    compiled.mkdir()
    jobs = int(SCons.Script.GetOption("num_jobs") or 1)
    modules, failures = hotspots.compile_benchmarks(
        env.subst("$IREE_COMPILE"), sorted(dumped.glob("*.mlir")), options, compiled, jobs,
        timeouts(env))
    hotspots.attach(rows, modules, failures)
    write_atomically(target[0].abspath,
                     json.dumps([dataclasses.asdict(r) for r in rows], indent=2) + "\n")


@reporting_user_errors
def compile_hotspot_kernels(target, source, env):
    dumped = Path(source[0].abspath).parent / "dumped"
    program, options = Path(str(source[1])), str(source[2])
    record = read_record(source[3].get_text_contents())
    folder = Path(target[0].abspath).parent / "kernels"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    found = hotspots.compile_kernels(env.subst("$IREE_COMPILE"), dumped, program, options,
                                     record.substitutions, folder, timeouts(env))
    write_atomically(target[0].abspath, json.dumps(found, indent=2, sort_keys=True) + "\n")


@reporting_user_errors
def write_hotspot_report(target, source, env):
    rows = [hotspot_report.Hotspot(**item)
            for item in json.loads(Path(str(source[0])).read_text())]
    record = read_record(source[1].get_text_contents())
    kernels = json.loads(source[2].get_text_contents()) if len(source) > 2 else {}
    hotspots.mark_substituted(rows, record.substitutions, kernels)
    flags = env.Split(env.subst("$IREE_HOTSPOTFLAGS"))
    report = hotspot_report.Report(record.model, record.target, env["IREE_RUN_DEVICE"], rows,
                                   " ".join(flags))
    driver = runtime.device_driver(report.device)
    available = driver in runtime.available_drivers(env.subst("$IREE_RUN_MODULE"),
                                                    timeouts(env)) \
        or remote.device_elsewhere(env, driver)
    hotspots.time(report, env.subst("$IREE_BENCHMARK_MODULE"), flags, available, timeouts(env),
                  remote.device_runner(env, target, driver) if remote.cluster(env) else None)
    text, plotted = hotspot_report.write(report, Path(target[0].abspath))
    print(text + (f"(also {target[1]}, {target[2]})" if plotted else
                  f"(also {target[1]}; {hotspot_report.NO_PLOT})") + "\n", end="")


def _benchmarks_emitter(target, source, env):
    env.Clean(target[0], target[0].dir)
    env.NoCache(target[0])      # the compiled modules beside it are not targets
    return target, source


def _kernels_emitter(target, source, env):
    env.NoCache(target[0])      # the compiled modules beside it are not targets
    return target, source


def _report_emitter(target, source, env):
    text = target[0]
    made = [text, text.target_from_source("", ".json"), text.target_from_source("", ".png")]
    env.AlwaysBuild(made)
    env.NoCache(made)           # a report says what this machine's device measured
    return made, source


def declare_hotspots(env, declared: DeclaredModule):
    """``hotspots.txt`` (+ .json, .png) of a module IreeKernelProject declared."""
    spec = {"compiler": toolchains.version(env.subst("$IREE_COMPILE"), timeouts=timeouts(env))}
    folder = declared.folder
    compiled = env.IreeHotspotBenchmarks(folder.Dir("hotspots").File("benchmarks.json"),
                                         [declared.executables, declared.options,
                                          spec_value(env, spec)])
    kernels = env.IreeHotspotKernels(folder.Dir("hotspots").File("kernels.json"),
                                     [compiled, declared.executable_ops,
                                      declared.options, declared.record, declared.module]) \
        if declared.substitutions else []
    report = env.IreeHotspotReport(folder.File("hotspots.txt"),
                                   [compiled, declared.record, *kernels],
                                   IREE_RUN_DEVICE=declared.target.run_device)
    env.Alias("hotspots", report)
    return report


def generate(env):
    env.SetDefault(IREE_HOTSPOTFLAGS=SCons.Util.CLVar(
                       settings.default("IREE_HOTSPOTFLAGS")),
                   IREE_HOTSPOTBENCHCOMSTR="Compiling the benchmarks of $TARGET",
                   IREE_HOTSPOTKERNELSCOMSTR="Compiling the kernels' benchmarks of $TARGET",
                   IREE_HOTSPOTSCOMSTR="Timing $TARGET")
    env["BUILDERS"]["IreeHotspotBenchmarks"] = SCons.Builder.Builder(
        action=SCons.Action.Action(compile_hotspot_benchmarks, "$IREE_HOTSPOTBENCHCOMSTR"),
        emitter=_benchmarks_emitter)
    env["BUILDERS"]["IreeHotspotKernels"] = SCons.Builder.Builder(
        action=SCons.Action.Action(compile_hotspot_kernels, "$IREE_HOTSPOTKERNELSCOMSTR"),
        emitter=_kernels_emitter)
    env["BUILDERS"]["IreeHotspotReport"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_hotspot_report, "$IREE_HOTSPOTSCOMSTR",
                                   varlist=["IREE_RUN_DEVICE", "IREE_HOTSPOTFLAGS"]),
        emitter=_report_emitter)
    env.AddMethod(declare_hotspots, "IreeHotspots")


def exists(env):
    return True
