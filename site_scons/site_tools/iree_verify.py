"""SCons tool: differential checks of substituted executables against IREE's own.

Method:
  env.IreeVerification(declared)   each substitution's check of a module IreeKernelProject
                                   declared ('scons verify', part of 'scons check')

Builders:
  IreeHarnesses        executables.mlir + options.flags + substitutions.json
                       -> verify/harnesses.json: per substituted executable, IREE's benchmark
                       module turned into a one-dispatch harness (one iree-compile per model,
                       up to codegen: no executable is translated)
  IreeHarnessReference harnesses.json + options.flags + resolved.json + Value(key)
                       -> <key>.iree.vmfb (the harness with IREE's executable) and
                       <key>.iree.note (why IREE cannot compile it, or empty)
  IreeHarnessModules   harnesses.json + options.flags + substitutions.json + resolved.json
                       + Value(key and tolerance) + <key>.iree.note + the kernel's files
                       -> <key>.verify.json, <key>.kernel.vmfb
  IreeVerify           <key>.verify.json + both modules -> <key>.verified (the comparison's log)

A kernel edit rebuilds its own kernel harness module and reruns its check (IREE's
harness does not change with it); the harnesses are made again only when the
program or the set of substitutions changes. Variables: IREE_COMPILE,
IREE_RUN_MODULE, IREE_RUN_DEVICE.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import SCons.Action
import SCons.Builder

from iree_kernels.check import benchmarks, expected_outputs, runtime
from iree_kernels.check.harness import workload_of
from iree_kernels.module import selection
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import scratch_folder, write_atomically
from iree_kernels.scons import remote
from iree_kernels.scons.escaping import escape
from iree_kernels.scons.module import (DeclaredModule, case_files, expected_cases, file_name,
                                       skipped)
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts
from iree_kernels.module.substitution import read_record


@reporting_user_errors
def write_harnesses(target, source, env):
    from iree_kernels.check import verification  # numpy: only where a verification runs
    program, options, record = (s.abspath for s in source[:3])
    names = sorted({a.executable for a in read_record(Path(record).read_text()).substitutions})
    expected = source[3].get_path() if len(source) > 3 else None
    out = Path(target[0].abspath)
    out.parent.mkdir(parents=True, exist_ok=True)
    with scratch_folder(out.parent, "benchmarks") as work:
        dumped = benchmarks.dump_benchmarks_of(
            env.subst("$IREE_COMPILE"), Path(program), options, Path(work), names,
            expected_outputs.case_shapes(expected, env["IREE_RUN_TARGET"]), timeouts(env))
        made = verification.harnesses(dumped, Path(program).read_text(), str(source[0]), names)
    write_atomically(target[0].abspath, json.dumps(made, sort_keys=True) + "\n")


@reporting_user_errors
def build_reference_module(target, source, env):
    """The harness compiled with IREE's own executable; its note says why it cannot be."""
    harnesses, options, resolved, key = source[:4]
    executable = selection.loads(resolved.get_text_contents())[key.read()].executable
    found = json.loads(Path(harnesses.abspath).read_text()).get(executable, {})
    module, note = (t.abspath for t in target[:2])
    why = found.get("note", "")
    if not why:
        why = _compile(env, found["harness"], options.abspath, [], module, target,
                       cannot=f"IREE cannot compile {executable} for this target, so there is "
                              "nothing to compare the kernel with")
    if why:
        write_atomically(module, b"")
    write_atomically(note, why)


@reporting_user_errors
def build_harness_modules(target, source, env):
    from iree_kernels.check import verification  # numpy: only where a verification runs
    harnesses, options, record, resolved, wanted, reference_note = source[:6]
    wanted = json.loads(wanted.read())
    landing = selection.loads(resolved.get_text_contents())[wanted["key"]]
    applied = read_record(record.get_text_contents()).applied(landing.executable)
    plan = verification.Plan(applied.model, applied.target, landing.executable, applied.kernel,
                             wanted["tolerance"])
    found = json.loads(Path(harnesses.abspath).read_text()).get(landing.executable, {})
    if wanted.get("workgroup_count"):        # wrapped: its launch shape at the sites' workloads
        workloads = [workload_of(case["function"]) for case in found.get("cases", [])]
        wrong = verification.count_error(wanted["workgroup_count"], workloads, wanted["where"])
        if wrong:
            raise UserError(wrong)
    plan_file, kernel_module = (t.abspath for t in target[:2])
    plan.note = Path(reference_note.abspath).read_text()
    plan.shapes = found.get("shapes", "")
    if not plan.note:
        _compile(env, found["harness"], options.abspath, applied.flags, kernel_module, target)
        plan.cases = found["cases"]
        plan.iree_module = reference_note.get_path().removesuffix(".note") + ".vmfb"
        plan.kernel_module = str(target[1])
    else:
        write_atomically(kernel_module, b"")
    write_atomically(plan_file, verification.to_json(plan))


def _compile(env, harness: str, options: str, flags: list[str], module: str, target,
             cannot: str = "") -> str:
    """Compile the harness with ``flags`` into ``module``. Where ``cannot`` is given, an
    error of iree-compile is not raised but returned after it: ``cannot (what it said)``;
    '' where it compiled."""
    runner = remote.compile_runner(env, target, timeouts(env)) if remote.cluster(env) else None
    with scratch_folder(Path(module).parent, "harness") as work:
        source = Path(work) / "harness.mlir"
        source.write_text(harness)
        try:
            benchmarks.compile_benchmark(env.subst("$IREE_COMPILE"), source, options, flags,
                                         Path(work) / "module.vmfb", timeouts(env), runner)
        except UserError as e:
            if not cannot:
                raise
            first = next((line for line in str(e).splitlines() if "error:" in line), str(e))
            why = first.split("error:", 1)[-1].strip()      # its location is a deleted file
            return f"{cannot} ({why[:200]})"
        write_atomically(module, (Path(work) / "module.vmfb").read_bytes())
    return ""


@reporting_user_errors
def run_verification(target, source, env):
    from iree_kernels.check import verification  # numpy: only where a verification runs
    plan = verification.from_json(source[0].get_text_contents(), str(source[0]))
    if plan.note:
        summary = f"verify: skipped {verification.describe(plan)}: {plan.note}\n"
    else:
        with scratch_folder(Path(target[0].abspath).parent, "verify") as work:
            device = env["IREE_RUN_DEVICE"]
            wrong = verification.run(plan, env.subst("$IREE_RUN_MODULE"), device, Path(work),
                                     timeouts(env), remote.device_runner(
                                         env, target, runtime.device_driver(device)))
        if wrong:
            raise UserError(f"differential check failed for {verification.describe(plan)} on "
                            f"{env['IREE_RUN_DEVICE']}: {wrong}")
        summary = (f"verify: {verification.describe(plan)} matched IREE's executable on "
                   f"{env['IREE_RUN_DEVICE']} ({len(plan.cases)} dispatch(es))\n")
    write_atomically(target[0].abspath, summary)
    print(summary, end="")


def _modules_emitter(target, source, env):
    plan = target[0]
    return [plan, env.File(plan.get_path().removesuffix(".verify.json") + ".kernel.vmfb")], source


def _reference_emitter(target, source, env):
    module = target[0]
    return [module, env.File(module.get_path().removesuffix(".vmfb") + ".note")], source


def declare_verification(env, declared: DeclaredModule) -> list:
    """Each substitution's differential check; returns the nodes (or skip lines)."""
    model, target = declared.model, declared.target
    folder = declared.folder.Dir("verify")
    # Dispatches with dynamic shapes are dumped with the input shapes of the expected outputs.
    expected = [env.File(f"#{model.expected}")] if model.expected else []
    harnesses = env.IreeHarnesses(folder.File("harnesses.json"),
                                  [declared.executables, declared.options, declared.record,
                                   *expected], IREE_RUN_TARGET=target.name)
    if model.expected:
        env.Depends(harnesses, case_files(env, expected_cases(env, declared)))
    driver = runtime.device_driver(target.run_device)
    runnable = driver in runtime.available_drivers(env.subst("$IREE_RUN_MODULE"), timeouts(env)) \
        or remote.device_elsewhere(env, driver)
    nodes = []
    for sub in declared.substitutions:
        stem = folder.File(f"{file_name(sub.key)}.verify.json")

        def skip(why: str):
            return skipped(env, f"verify-{declared.where.folder}-{model.name}-{stem.name}",
                           escape(f"verify: skipped {sub.key} of {model.name}/"
                                  f"{declared.where.folder}: {why}"))
        if not sub.verify:
            nodes += skip(f"{sub.origin.file} says it computes something else (verify = false)")
            continue
        tolerance = asdict(sub.tolerance)
        counted = {"workgroup_count": list(sub.workgroup_count),
                   "where": f"{sub.origin.file}:{sub.origin.line}: {sub.origin.entry}"} \
            if sub.workgroup_count else {}
        wanted = env.Value(json.dumps({"key": sub.key, "tolerance": tolerance, **counted},
                                      sort_keys=True))
        reference = env.IreeHarnessReference(
            folder.File(f"{file_name(sub.key)}.iree.vmfb"),
            [harnesses, declared.options, declared.resolved, env.Value(sub.key)])
        plan = env.IreeHarnessModules(stem, [harnesses, declared.options, declared.record,
                                             declared.resolved, wanted, reference[1],
                                             *declared.kernels[sub.key].nodes])
        env.Depends(plan, reference[0])
        if not runnable:
            nodes += [plan, skip(f"no '{driver}' device on this machine; python -m "
                                 f"iree_kernels.check.verification {stem} --device="
                                 f"{target.run_device} runs it where there is one")]
            continue
        verified = env.IreeVerify(folder.File(f"{file_name(sub.key)}.verified"), plan,
                                  IREE_RUN_DEVICE=target.run_device)
        env.NoCache(verified)     # it says what this machine's device computes
        nodes += verified
    env.Alias("verify", nodes)
    return nodes


def generate(env):
    env.SetDefault(IREE_HARNESSCOMSTR="Writing differential-check harnesses $TARGET",
                   IREE_HARNESSREFERENCECOMSTR="Compiling the harness of IREE's executable $TARGET",
                   IREE_HARNESSMODULESCOMSTR="Compiling the kernel's harness of $TARGET",
                   IREE_VERIFYCOMSTR="Comparing the kernel with IREE's executable $TARGET")
    env["BUILDERS"]["IreeHarnesses"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_harnesses, "$IREE_HARNESSCOMSTR",
                                   varlist=["IREE_RUN_TARGET"]), suffix=".json")
    env["BUILDERS"]["IreeHarnessReference"] = SCons.Builder.Builder(
        action=SCons.Action.Action(build_reference_module, "$IREE_HARNESSREFERENCECOMSTR"),
        emitter=_reference_emitter)
    env["BUILDERS"]["IreeHarnessModules"] = SCons.Builder.Builder(
        action=SCons.Action.Action(build_harness_modules, "$IREE_HARNESSMODULESCOMSTR"),
        emitter=_modules_emitter)
    env["BUILDERS"]["IreeVerify"] = SCons.Builder.Builder(
        action=SCons.Action.Action(run_verification, "$IREE_VERIFYCOMSTR",
                                   varlist=["IREE_RUN_DEVICE"]),
        suffix=".verified")
    env.AddMethod(declare_verification, "IreeVerification")


def exists(env):
    return env.Detect(toolchains.iree_tool("iree-run-module") or "iree-run-module")
