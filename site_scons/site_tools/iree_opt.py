"""SCons tool: kernels derived from the model's own executables by iree-opt pipelines.

Builder:
  IreeDerivedKernel   Value(substitution) + executables.ops.mlir + resolved.json
                      -> KEY.derived.mlir (the kernel substituted) and
                         KEY.dumped.mlir (the executable it was derived from)

The executable is taken from the model's executable-sources program (the front
end's output, without the weights), so re-exporting or editing the model
derives the kernel again; each of the substitution's pipelines is one run of
``$IREE_OPT $IREE_OPTFLAGS --pass-pipeline=PIPELINE`` (a Python action: the
pipelines are the manifest's text and never pass through SCons's
substitution), limited by IREE_COMPILE_TIMEOUT. The result is checked to be
the same executable (``iree_kernels.module.derived``) and substituted as a source kernel.

Variables: IREE_OPT (default: the iree-opt beside $IREE_COMPILE), IREE_OPTFLAGS,
IREE_OPTCOMSTR.
"""
from __future__ import annotations

import SCons.Action
import SCons.Builder
import SCons.Util

from iree_kernels.module import derived, selection
from iree_kernels.ir import executables
from iree_kernels.core.files import write_atomically
from iree_kernels.project.records import Substitution
from iree_kernels.ir.program_text import executable_alone
from iree_kernels.scons.escaping import program
from iree_kernels.scons.kernels import tool_version
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts


@reporting_user_errors
def derive_kernel(target, source, env):
    sub = Substitution.from_dict(read_spec(source[0]))
    ops, resolved = source[1], source[2]
    name = selection.loads(resolved.get_text_contents())[sub.key].executable
    dumped = target[1]
    source_text = executable_alone(ops.get_text_contents(), str(ops), name).as_dumped()
    write_atomically(dumped.abspath, source_text + "\n")
    found = executables.read_executables(source_text, dumped.get_path())[name]
    flags = [str(a) for line in env.subst_list("$IREE_OPTFLAGS") for a in line]
    made = derived.derive_in_folder(env.subst("$IREE_OPT"), flags, sub, source_text, found,
                                    dumped.get_path(), timeouts(env))
    write_atomically(target[0].abspath, made)


def _emitter(target, source, env):
    kernel = target[0]
    return [kernel, kernel.dir.File(kernel.name.replace(".derived.mlir", ".dumped.mlir"))], source


def declare_derived_kernel(env, kernel, ops, *, sub: Substitution, resolved):
    """``kernel`` (KEY.derived.mlir) derived from its executable in ``ops`` by ``sub.passes``."""
    inputs = [spec_value(env, sub.to_dict()), ops, resolved]
    if sub.passes_file:
        inputs.append(env.Dir("#").File(sub.passes_file))
    made = env.IreeDerivedKernel(kernel, inputs)
    env.Depends(made, tool_version(env.subst("$IREE_OPT")))
    return made


def generate(env):
    env.SetDefault(
        IREE_OPT=program(derived.iree_opt(env.subst("$IREE_COMPILE")) or "iree-opt"),
        IREE_OPTFLAGS=SCons.Util.CLVar(""),
        IREE_OPTCOMSTR="Deriving the kernel $TARGET with iree-opt",
    )
    env["BUILDERS"]["IreeDerivedKernel"] = SCons.Builder.Builder(
        action=SCons.Action.Action(derive_kernel, "$IREE_OPTCOMSTR", varlist=["IREE_OPTFLAGS"]),
        suffix=".mlir", emitter=_emitter)
    env.AddMethod(declare_derived_kernel, "IreeDerive")


def exists(env):
    return env.Detect(env.get("IREE_OPT") or derived.iree_opt() or "iree-opt")
