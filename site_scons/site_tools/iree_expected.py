"""SCons tool: 'scons expected' writes a model's expected outputs from IREE's plain llvm-cpu module.

Method:
  env.IreeExpectedOutputs(declared)
      for the llvm-cpu module of a model IreeKernelProject declared: its
      reference module (the front end's program compiled with no
      substitution: ``<module folder>/reference.vmfb``) and, in the
      ``expected`` alias, the step writing ``model.expected_file`` and the
      ``.npy`` files it names (``iree_kernels.check.reference_outputs``). It never
      overwrites expected outputs.

Variables: EXPECTED (the models; default: every model without expected outputs).
"""
from __future__ import annotations

import sys
from pathlib import Path

import SCons.Action

from iree_kernels.core.errors import UserError
from iree_kernels.scons.escaping import escape
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts

SHORT_COMSTR = "EXPECTED  $TARGET"


@reporting_user_errors
def write_expected(target, source, env):
    from iree_kernels.check import reference_outputs  # numpy: only when 'scons expected' runs
    spec, reference, model = read_spec(source[0]), source[1], source[2]
    root = Path(env.Dir("#").abspath)
    if (root / spec["expected"]).exists():
        raise UserError(f"{spec['expected']} exists already; move it away to write it again")
    warnings = reference_outputs.write(reference.abspath, env.subst("$IREE_RUN_MODULE"), root,
                                       spec["expected"], spec["source"],
                                       timeouts=timeouts(env), model=model.abspath)
    for warning in warnings:
        sys.stderr.write(f"scons: warning: {warning}\n")
    print(f"expected: wrote {spec['expected']} from {reference}; 'scons check' runs every "
          f"module of model '{spec['model']}' against it")


def declare_expected(env, declared: DeclaredModule):
    """'scons expected': the model's expected outputs, from its llvm-cpu front end's program."""
    model = declared.model
    folder = declared.module.dir.Dir(model.name)
    phase = env.Textfile(folder.File("reference.flags"), ["--compile-from=executable-sources"])
    reference = env.IreeModule(folder.File("reference.vmfb"),
                               [declared.executables, declared.options, phase])
    spec = {"model": model.name, "expected": model.expected_file, "source": model.source}
    shown = SHORT_COMSTR.replace("$TARGET", model.expected_file)
    program = declared.executables.sources[0]           # the model's MLIR (its import's)
    node = env.Alias(f"expected-{model.name}", [spec_value(env, spec), reference, program],
                     SCons.Action.Action(write_expected, escape(shown)))
    env.AlwaysBuild(node)
    return env.Alias("expected", node)


def generate(env):
    if "Textfile" not in env["BUILDERS"]:
        env.Tool("textfile")
    env.AddMethod(declare_expected, "IreeExpectedOutputs")


def exists(env):
    return True
