"""SCons tool: render the flag files iree-compile reads, from manifest entries.

Builders:
  IreeOptionsFile        Value(JSON list of flags) -> options.flags
  IreeSubstitutions      Value(JSON spec) + executables.mlir + kernels
                         -> substitutions.flags, substitutions.json
  IreeSpirvEntryPoint    shader.spv + executables.mlir + Value(JSON substitution)
                         -> a copy whose entry point 'main' has the export's name
  IreeWrapper            Value(substitution) + executables.mlir + kernel
                         -> a hal.executable linking the kernel with its own launch shape

The spec travels as a Value node rather than a construction variable because
executable names may hold '$', which SCons would expand.

The substitution step reads the model's executables with the MLIR bindings and
refuses a substitution naming an executable that does not exist, which
iree-compile itself only warns about.
"""
from __future__ import annotations

import json

import SCons.Action
import SCons.Builder

from pathlib import Path

from iree_kernels import executables, spirv, substitution
from iree_kernels.errors import UserError
from iree_kernels.manifest import Substitution
from iree_kernels.workgroups import ExpressionError
from iree_kernels.wrappers import render_wrapper
from iree_kernels_scons import reporting_user_errors, write_atomically


@reporting_user_errors
def write_options(target, source, env):
    flags = json.loads(source[0].read())
    write_atomically(target[0].abspath, substitution.options_file(flags))


@reporting_user_errors
def write_substitutions(target, source, env):
    spec = json.loads(source[0].read())
    subs = [Substitution.from_dict(d) for d in spec["substitutions"]]
    found = {}
    if subs:
        dump = source[1]
        found = executables.read_executables(dump.get_text_contents(), str(dump))
    # The checkers' versions are in the spec only so that a new checker checks again.
    checks = substitution.KernelChecks(**{k: v for k, v in spec["checks"].items()
                                          if k != "versions"})
    planned = substitution.plan(subs, found, spec["paths"], checks)
    write_atomically(target[0].abspath, substitution.flag_file(planned))
    write_atomically(target[1].abspath, substitution.record(
        spec["model"], spec["target"], spec["source"], planned))


@reporting_user_errors
def name_spirv_entry_point(target, source, env):
    shader, dump = source[0], source[1]
    sub = Substitution.from_dict(json.loads(source[2].read()))
    found = executables.read_executables(dump.get_text_contents(), str(dump))
    # An executable the model lacks: the manifest's line, and the executables it has.
    executable = substitution.plan([sub], found)[0].executable
    renamed = spirv.rename_entry_point(Path(shader.abspath).read_bytes(), str(shader), "main",
                                       executable.export.name)
    write_atomically(target[0].abspath, renamed)


@reporting_user_errors
def write_wrapper(target, source, env):
    fields = {k: v for k, v in json.loads(source[0].read()).items() if k != "library"}
    sub = Substitution.from_dict(fields)
    dump, kernel = source[1], source[2]
    found = executables.read_executables(dump.get_text_contents(), str(dump))
    executable = substitution.plan([sub], found)[0].executable
    try:
        text = render_wrapper(executable, kernel.get_path(), list(sub.workgroup_count),
                              list(sub.workgroup_size) or None, sub.function or None,
                              sub.origin.file, sub.origin.entry)
    except ExpressionError as e:
        raise sub.origin.error(f"{e} (executable '{executable.name}' takes "
                               f"{executable.export.workload} workload values)",
                               "workgroup_count") from None
    write_atomically(target[0].abspath, text)


def _substitutions_emitter(target, source, env):
    flags = target[0]
    record = flags.target_from_source("", ".json") if len(target) == 1 else target[1]
    return [flags, record], source


def generate(env):
    env.SetDefault(IREE_OPTIONSCOMSTR="Writing $TARGET",
                   IREE_SUBSTITUTECOMSTR="Checking and rendering substitutions $TARGET",
                   IREE_ENTRYPOINTCOMSTR="Naming the entry point of $TARGET",
                   IREE_WRAPPERCOMSTR="Rendering the wrapper $TARGET")
    env["BUILDERS"]["IreeOptionsFile"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_options, "$IREE_OPTIONSCOMSTR"),
        suffix=".flags")
    env["BUILDERS"]["IreeSubstitutions"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_substitutions, "$IREE_SUBSTITUTECOMSTR"),
        suffix=".flags", emitter=_substitutions_emitter)
    env["BUILDERS"]["IreeWrapper"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_wrapper, "$IREE_WRAPPERCOMSTR"), suffix=".mlir")
    env["BUILDERS"]["IreeSpirvEntryPoint"] = SCons.Builder.Builder(
        action=SCons.Action.Action(name_spirv_entry_point, "$IREE_ENTRYPOINTCOMSTR"),
        suffix=".spv")


def exists(env):
    return True
