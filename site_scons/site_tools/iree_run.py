"""SCons tool: run built modules against the expected outputs kept next to their model.

Builder:
  IreeCheck   module.vmfb + model.expected.toml -> module.check (iree-run-module's log)

The device is ``$IREE_RUN_DEVICE``; the target to select cases for is
``$IREE_RUN_TARGET``. The log is written only when every case matched.
"""
from __future__ import annotations

import SCons.Action
import SCons.Builder

from iree_kernels import checks, toolchains
from iree_kernels.scons import program, reporting_user_errors, write_atomically


@reporting_user_errors
def run_checks(target, source, env):
    module, expected = source[0], source[1]
    cases = checks.load_cases(str(expected), env["IREE_RUN_TARGET"])
    log = []
    for case in cases:
        log.append(checks.run_case(case, env.subst("$IREE_RUN_MODULE"), str(module),
                                   env["IREE_RUN_DEVICE"], str(expected)))
    summary = f"{len(cases)} case(s) of {expected} matched on {env['IREE_RUN_DEVICE']}\n"
    write_atomically(target[0].abspath, "".join(log) + summary)
    print(f"check: {module}: {summary}", end="")


def generate(env):
    env.SetDefault(
        IREE_RUN_MODULE=program(toolchains.iree_tool("iree-run-module") or "iree-run-module"),
        IREE_CHECKCOMSTR="Checking $SOURCE on $IREE_RUN_DEVICE",
    )
    env["BUILDERS"]["IreeCheck"] = SCons.Builder.Builder(
        action=SCons.Action.Action(run_checks, "$IREE_CHECKCOMSTR",
                                   varlist=["IREE_RUN_DEVICE", "IREE_RUN_TARGET"]),
        suffix=".check", src_suffix=".vmfb")


def exists(env):
    return env.Detect(toolchains.iree_tool("iree-run-module") or "iree-run-module")
