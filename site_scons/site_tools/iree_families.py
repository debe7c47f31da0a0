"""SCons tool: what a kernel family's instances are built from, and what it took.

Builders:
  IreeGemmHeader  Value(spec: an instance's facts) -> iree_gemm.h, the header a C or CUDA
                  family kernel is compiled with for that executable
                  (iree_kernels.kinds.gemm_interface)
  IreeFamilies    Value(text) -> families.txt: which executables each family entry of a
                  module took and why it declined the others; printed when it changes

Instances are expanded while the build is read (iree_kernels.scons.discovery,
iree_kernels.project.families); each is then a substitution like any other.
"""
from __future__ import annotations

import sys

import SCons.Action
import SCons.Builder

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import write_atomically
from iree_kernels.ir.contractions import Contraction
from iree_kernels.kinds.gemm_interface import Unsupported, header
from iree_kernels.scons.nodes import read_spec
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


def write_families(target, source, env):
    text = read_spec(source[0])
    write_atomically(target[0].abspath, text)
    sys.stdout.write(text)
    sys.stdout.flush()


def generate(env):
    env.SetDefault(IREE_GEMMHEADERCOMSTR="Writing the GEMM header $TARGET")
    env["BUILDERS"]["IreeGemmHeader"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_gemm_header, "$IREE_GEMMHEADERCOMSTR"))
    env["BUILDERS"]["IreeFamilies"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_families, strfunction=lambda *args, **kw: None))


def exists(env):
    return True
