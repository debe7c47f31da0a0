"""SCons tool: render the flag files iree-compile reads, from manifest entries.

Builders:
  IreeOptionsFile        Value(JSON list of flags) -> options.flags
  IreeSubstitutions      Value(JSON spec) + executables.mlir + kernels
                         -> substitutions.flags, substitutions.json

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

from iree_kernels import executables, substitution
from iree_kernels.manifest import Substitution
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
    planned = substitution.plan(subs, found, spec.get("paths", {}))
    write_atomically(target[0].abspath, substitution.flag_file(planned))
    write_atomically(target[1].abspath, substitution.record(
        spec["model"], spec["target"], spec["source"], planned))


def _substitutions_emitter(target, source, env):
    flags = target[0]
    record = flags.target_from_source("", ".json") if len(target) == 1 else target[1]
    return [flags, record], source


def generate(env):
    env.SetDefault(IREE_OPTIONSCOMSTR="Writing $TARGET",
                   IREE_SUBSTITUTECOMSTR="Checking and rendering substitutions $TARGET")
    env["BUILDERS"]["IreeOptionsFile"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_options, "$IREE_OPTIONSCOMSTR"),
        suffix=".flags")
    env["BUILDERS"]["IreeSubstitutions"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_substitutions, "$IREE_SUBSTITUTECOMSTR"),
        suffix=".flags", emitter=_substitutions_emitter)


def exists(env):
    return True
