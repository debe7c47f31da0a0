"""SCons tool: run built modules against the expected outputs kept next to their model.

Method:
  env.IreeModuleCheck(declared)   the check of a module IreeKernelProject declared
                                  (part of 'scons check'), or why it is skipped

Builder:
  IreeCheck   module.vmfb + model.expected.toml -> module.check (iree-run-module's log)

The device is ``$IREE_RUN_DEVICE``; the target to select cases for is
``$IREE_RUN_TARGET``. The log is written only when every case matched.
"""
from __future__ import annotations

import SCons.Action
import SCons.Builder

from iree_kernels.check import expected_outputs, runtime
from iree_kernels.core import toolchains
from iree_kernels.core.files import write_atomically
from iree_kernels.scons import remote
from iree_kernels.scons.escaping import escape, program
from iree_kernels.scons.module import DeclaredModule, case_files, expected_cases, skipped, wanted
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts


@reporting_user_errors
def run_checks(target, source, env):
    module, expected = source[0], source[1]
    cases = expected_outputs.load_cases(str(expected), env["IREE_RUN_TARGET"])
    device = env["IREE_RUN_DEVICE"]
    runner = remote.process_runner(env, target, runtime.device_driver(device))
    log = []
    for case in cases:
        log.append(expected_outputs.run_case(case, env.subst("$IREE_RUN_MODULE"), str(module),
                                             device, str(expected), timeouts=timeouts(env),
                                             runner=runner, work_in=target[0].dir.abspath))
    summary = f"{len(cases)} case(s) of {expected} matched on {env['IREE_RUN_DEVICE']}\n"
    write_atomically(target[0].abspath, "".join(log) + summary)
    print(f"check: {module}: {summary}", end="")


def declare_check(env, declared: DeclaredModule):
    """The module's expected-output cases on its target's device ('scons check')."""
    model, target, module = declared.model, declared.target, declared.module
    name = f"check-{declared.where.folder}-{model.name}"
    if model.expected is None:
        return skipped(env, name, escape(
            f"check: skipped {module}: model '{model.name}' has no expected outputs; create "
            f"{model.expected_file} ('scons expected EXPECTED={model.name}' writes it from "
            "IREE's plain llvm-cpu compile)"), [module])
    if not wanted(env, "check"):
        return env.Alias(name, [])
    driver = runtime.device_driver(target.run_device)
    if driver not in runtime.available_drivers(env.subst("$IREE_RUN_MODULE"), timeouts(env)) \
            and not remote.device_elsewhere(env, driver):
        return skipped(env, name, escape(f"check: skipped {module}: no '{driver}' device on "
                                         "this machine (iree-run-module --list_devices)"),
                       [module])
    cases = expected_cases(env, declared)
    if not cases:
        return skipped(env, name, escape(f"check: skipped {module}: no case of "
                                         f"{model.expected} applies to target '{target.name}'"),
                       [module])
    check = env.IreeCheck(module.target_from_source("", ".check"), [module, model.expected],
                          IREE_RUN_DEVICE=target.run_device, IREE_RUN_TARGET=target.name)
    env.Depends(check, case_files(env, cases))
    env.NoCache(check)      # a check says what this machine's device computes
    return check


def generate(env):
    env.SetDefault(
        IREE_RUN_MODULE=program(toolchains.iree_tool("iree-run-module") or "iree-run-module"),
        IREE_CHECKCOMSTR="Checking $SOURCE on $IREE_RUN_DEVICE",
    )
    env["BUILDERS"]["IreeCheck"] = SCons.Builder.Builder(
        action=SCons.Action.Action(run_checks, "$IREE_CHECKCOMSTR",
                                   varlist=["IREE_RUN_DEVICE", "IREE_RUN_TARGET"]),
        suffix=".check", src_suffix=".vmfb")
    env.AddMethod(declare_check, "IreeModuleCheck")


def exists(env):
    return env.Detect(toolchains.iree_tool("iree-run-module") or "iree-run-module")
