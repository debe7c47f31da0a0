"""SCons tool: render the flag files iree-compile reads, from manifest entries.

Builders:
  IreeOptionsFile        Value(JSON list of flags) -> options.flags
  IreeExecutableListing  executables.ops.mlir -> executables.json: each executable's exports,
                         layout, tensors and fingerprint (iree_kernels.ir.listing), which the
                         steps below read instead of parsing MLIR
  IreeResolve            Value(JSON substitutions) + executables.json
                         -> resolved.json: the executable each substitution's selector
                         (executable, export, fingerprint) lands on, by Substitution.key
  IreeSubstitutions      Value(JSON spec) + executables.json + resolved.json + kernels
                         -> substitutions.flags, substitutions.json
  IreeSpirvEntryPoint    shader.spv + resolved.json + Value(substitution key)
                         -> a copy whose entry point 'main' has the export's name
  IreeRenamedSource      kernel.mlir + resolved.json + Value(substitution key)
                         -> the source kernel with its executable renamed to the one selected
  IreeWrapper            Value(substitution, kernel path) + executables.json + resolved.json
                         [+ the kernel's launch metadata]
                         -> a hal.executable linking the kernel with its own launch shape;
                         it names the kernel by path and reads none of it, so a kernel
                         edit leaves it (and the unlinked module compiled with its
                         placeholder) up to date, in a dry run too

The spec travels as a Value node rather than a construction variable because
executable names may hold '$', which SCons would expand.

Which executable a selector lands on is known only once IREE's front end has
written executables.mlir, so every step that needs the name reads resolved.json;
files are named after the substitution's key, known when SConscripts are read.
A model edit that renumbers dispatches resolves again; a kernel edit does not.
The resolution reads its previous resolved.json (kept: the target is precious)
to tell a fingerprint that changed from one that never matched.
The resolution refuses a substitution naming an executable that does not exist,
which iree-compile itself only warns about.
"""
from __future__ import annotations

import json

import SCons.Action
import SCons.Builder

from pathlib import Path

from iree_kernels.core import flag_files
from iree_kernels.ir import listing
from iree_kernels.module import selection, substitution
from iree_kernels.binaries import spirv
from iree_kernels.core.errors import UserError
from iree_kernels.project.records import Substitution
from iree_kernels.ir.workgroups import ExpressionError
from iree_kernels.ir.wrappers import render_wrapper
from iree_kernels.core.files import write_atomically
from iree_kernels.scons.nodes import read_spec
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts


@reporting_user_errors
def write_options(target, source, env):
    flags = read_spec(source[0])
    write_atomically(target[0].abspath, flag_files.write(flags))


@reporting_user_errors
def write_listing(target, source, env):
    ops = source[0]
    write_atomically(target[0].abspath,
                     listing.dumps(listing.of_program(ops.get_text_contents(), str(ops))))


def listed(node) -> listing.Listing:
    """What IreeExecutableListing wrote to ``node``."""
    return listing.loads(node.get_text_contents(), str(node))


@reporting_user_errors
def write_resolution(target, source, env):
    subs = [Substitution.from_dict(d) for d in read_spec(source[0])]
    found = listed(source[1])
    landed = selection.resolve(subs, found.executables, found.fingerprints, _seen(target[0]))
    write_atomically(target[0].abspath, selection.dumps(landed))


def _seen(resolved) -> set[str]:
    """The fingerprints the previous resolution landed on (kept: ``_precious``); none if unreadable."""
    try:
        return {landing.fingerprint for landing in
                selection.loads(Path(resolved.abspath).read_text(encoding="utf-8")).values()}
    except (OSError, ValueError, TypeError, AttributeError):
        return set()


def _precious(target, source, env):
    """SCons removes a target before rebuilding it; the resolution reads its previous self."""
    env.Precious(target)
    return target, source


def _landed(node) -> dict:
    return selection.loads(node.get_text_contents())


@reporting_user_errors
def write_substitutions(target, source, env):
    spec = read_spec(source[0])
    subs = [Substitution.from_dict(d) for d in spec["substitutions"]]
    found, landed = {}, {}
    if subs:
        found = listed(source[1]).executables
        landed = _landed(source[2])
    checks = substitution.KernelChecks(**spec["checks"], timeouts=timeouts(env))
    planned = substitution.plan_substitutions(subs, found, spec["paths"], checks, landed)
    write_atomically(target[0].abspath, substitution.flag_file(planned))
    write_atomically(target[1].abspath, substitution.record(
        spec["model"], spec["target"], spec["source"], planned))


@reporting_user_errors
def name_spirv_entry_point(target, source, env):
    shader, resolved, key = source[0], source[1], source[2].read()
    landing = _landed(resolved).get(key)
    if landing is None or not landing.export:
        raise UserError(f"no executable for '{key}' to name the entry point after",
                        file=str(resolved))
    renamed = spirv.rename_entry_point(Path(shader.abspath).read_bytes(), str(shader), "main",
                                       landing.export)
    write_atomically(target[0].abspath, renamed)


@reporting_user_errors
def rename_source(target, source, env):
    kernel, resolved, key = source[0], source[1], source[2].read()
    landing = _landed(resolved)[key]
    write_atomically(target[0].abspath, selection.renamed_source(
        kernel.get_text_contents(), str(kernel), landing.executable))


@reporting_user_errors
def write_wrapper(target, source, env):
    spec = read_spec(source[0])
    sub, release = Substitution.from_dict(spec["substitution"]), spec["iree_release"]
    listing, resolved, *launch_metadata = source[1:]
    found = listed(listing).executables
    executable = substitution.plan_substitutions([sub], found, checks=substitution.UNCHECKED,
                                   landed=_landed(resolved))[0].executable
    # A kernel whose compiler says its launch shape (its metadata): size, shared memory.
    launch = json.loads(launch_metadata[0].get_text_contents()) if launch_metadata else {}
    size = launch.get("workgroup_size") or list(sub.workgroup_size) or None
    # A GPU kernel's wrapper names no function: the kernel is the export itself.
    function = sub.function if sub.target == "llvm-cpu" else ""
    try:
        text = render_wrapper(executable, spec["kernel"], list(sub.workgroup_count),
                              size, function or None,
                              sub.origin.file, sub.origin.entry, release and tuple(release),
                              workgroup_local_memory=launch.get("workgroup_local_memory", 0))
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
                   IREE_LISTINGCOMSTR="Listing the executables of $SOURCE: $TARGET",
                   IREE_RESOLVECOMSTR="Resolving the executables substitutions select $TARGET",
                   IREE_SUBSTITUTECOMSTR="Checking and rendering substitutions $TARGET",
                   IREE_ENTRYPOINTCOMSTR="Naming the entry point of $TARGET",
                   IREE_WRAPPERCOMSTR="Rendering the wrapper $TARGET",
                   IREE_RENAMECOMSTR="Renaming the kernel's executable $TARGET")
    env["BUILDERS"]["IreeOptionsFile"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_options, "$IREE_OPTIONSCOMSTR"),
        suffix=".flags")
    env["BUILDERS"]["IreeExecutableListing"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_listing, "$IREE_LISTINGCOMSTR"), suffix=".json",
        src_suffix=".mlir")
    env["BUILDERS"]["IreeResolve"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_resolution, "$IREE_RESOLVECOMSTR"), suffix=".json",
        emitter=_precious)
    env["BUILDERS"]["IreeSubstitutions"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_substitutions, "$IREE_SUBSTITUTECOMSTR"),
        suffix=".flags", emitter=_substitutions_emitter)
    env["BUILDERS"]["IreeWrapper"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_wrapper, "$IREE_WRAPPERCOMSTR"), suffix=".mlir")
    env["BUILDERS"]["IreeRenamedSource"] = SCons.Builder.Builder(
        action=SCons.Action.Action(rename_source, "$IREE_RENAMECOMSTR"), suffix=".mlir")
    env["BUILDERS"]["IreeSpirvEntryPoint"] = SCons.Builder.Builder(
        action=SCons.Action.Action(name_spirv_entry_point, "$IREE_ENTRYPOINTCOMSTR"),
        suffix=".spv")


def exists(env):
    return True
