"""SCons tool: what a kernel family's instances are built from, and what it took.

Builders:
  IreeGemmHeader  Value(spec: an instance's facts) -> iree_gemm.h, the header a C or CUDA
                  family kernel is compiled with for that executable
                  (iree_kernels.kinds.gemm_interface)
  IreeTimings     Value(instances) + microbenchmarks.json... -> a family's timings file
                  (keep = "faster"), in the repository: each instance's time beside IREE's
                  executable's (iree_kernels.project.timings); 'scons timings' on the device
  IreeFamilies    Value(text) -> families.txt: which executables each family entry of a
                  module took and why it declined the others; printed when it changes

Instances are expanded while the build is read (iree_kernels.scons.discovery,
iree_kernels.project.families); each is then a substitution like any other.
"""
from __future__ import annotations

import sys

import SCons.Action
import SCons.Builder

from pathlib import Path

from iree_kernels.check import benchmarks
from iree_kernels.core.errors import UserError
from iree_kernels.project import timings
from iree_kernels.core.files import write_atomically
from iree_kernels.ir.gemm_facts import Contraction
from iree_kernels.kinds.gemm_interface import Unsupported, header
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import reporting_user_errors


@reporting_user_errors
def write_gemm_header(target, source, env):
    spec = read_spec(source[0])
    facts = spec["facts"]
    try:
        text = header(Contraction.from_dict(facts), executable=spec["executable"],
                      export=facts["export"], model=spec["model"], target=spec["target"],
                      cuda=spec["cuda"])
    except Unsupported as e:
        raise UserError(f"{spec['where']}: the family's header cannot be written: {e}") from None
    write_atomically(target[0].abspath, text)


@reporting_user_errors
def write_timings(target, source, env):
    wanted = {(i["model"], i["target"], i["executable"]): i for i in read_spec(source[0])}
    timed = []
    for node in source[1:]:
        for r in benchmarks.from_json(node.get_text_contents()):
            instance = wanted.get((r.model, r.target, r.executable))
            if instance and r.plain_us and r.substituted_us:
                timed.append(timings.Timing(r.model, r.target, instance["export"],
                                            instance["instance"], r.plain_us, r.substituted_us,
                                            r.device))
                print(f"timings: {r.model}/{r.target} {r.executable}: IREE {r.plain_us:.1f} us, "
                      f"the kernel {r.substituted_us:.1f} us -> {target[0]}")
            elif instance:
                print(f"timings: {r.model}/{r.target} {r.executable}: not timed ({r.note})")
    path = Path(target[0].abspath)
    timings.write(path, timings.merged(path, str(target[0]), timed))


def declare_timings(env, declared, microbenchmarks) -> list:
    """'scons timings': the timings files of the module's keep = "faster" families."""
    root = Path(env.Dir("#").abspath)
    files: dict[str, list] = {}
    for sub in declared.substitutions:
        if sub.facts and sub.keep == "faster":
            kernel = (root / sub.file).read_bytes()
            files.setdefault(sub.timings, []).append({
                "model": sub.model, "target": sub.target, "executable": sub.executable,
                "export": sub.facts["export"],
                "instance": timings.instance_digest(sub, kernel)})
    made = []
    for path, instances in files.items():
        node = env.IreeTimings(env.Dir("#").File(path),
                               [spec_value(env, instances), *microbenchmarks])
        env.AlwaysBuild(node)
        env.NoClean(node)               # the repository's file: scons -c leaves it
        env.Alias("timings", node)
        made += node
    return made


def write_families(target, source, env):
    text = read_spec(source[0])
    write_atomically(target[0].abspath, text)
    sys.stdout.write(text)
    sys.stdout.flush()


def generate(env):
    env.SetDefault(IREE_GEMMHEADERCOMSTR="Writing the GEMM header $TARGET",
                   IREE_TIMINGSCOMSTR="Writing the timings $TARGET")
    env["BUILDERS"]["IreeGemmHeader"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_gemm_header, "$IREE_GEMMHEADERCOMSTR"))
    env["BUILDERS"]["IreeTimings"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_timings, "$IREE_TIMINGSCOMSTR"))
    env.AddMethod(declare_timings, "IreeFamilyTimings")
    env["BUILDERS"]["IreeFamilies"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_families, strfunction=lambda *args, **kw: None))


def exists(env):
    return True
