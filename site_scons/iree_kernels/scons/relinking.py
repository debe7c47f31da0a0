"""Where RELINK applies to a module, and what is declared for it: the library decides, the tools build.

``declare_unlinked_from_model`` (called by the project for every module)
  where the module is relinked and the codegen cache is off for its target
  (``from_model``), declares its executables alone (``executables.ops.mlir``)
  from dumps of their sources made by a compile of the model itself, and on
  llvm-cpu the unlinked module in the same run; returns a ``FromModel``, else None.
``declare_relinked_module`` (called by ``iree_program`` for a module with substitutions)
  where RELINK applies to the module (``relinkable``), declares ``module``
  as the model's unlinked module with each replaced executable's binary
  put in (``iree_kernels.module.relink``) and returns it; else returns None.

The steps are the builders of ``site_tools/iree_relink.py`` (EXPORTS, BINARY,
RELINK, the unlinked compile, the dump of the executables), of
``iree_program`` (the unlinked program) and ``iree_compile`` (its module);
that tool's docstring says what each file is.

Not for: building any of it (the tools' actions), how a kernel's binary is put
in (``iree_kernels.module.relink``).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.module import codegen_cache, relink
from iree_kernels.scons.kernels import tool_version
from iree_kernels.scons.module import EXECUTABLE_OPS, building_as_released, file_name
from iree_kernels.scons.nodes import spec_value
from iree_kernels.scons.spawn import timeouts

# Where an object-mode kernel's binary is IREE's translation of the executable with the object in
# place of its code.
OBJECT_TARGETS = ("cuda", "vulkan")
# Where dumping the executables' sources during a compile leaves its binaries as they are. The
# dump points each executable's locations at its file, and CUDA's and Vulkan's binaries record
# that path in their debug information: there a run of its own dumps them.
DUMP_KEEPS_BINARIES = ("llvm-cpu",)
# The relink steps' short progress lines (the tool's own, iree_relink.SHORT_COMSTRS), given to
# each step where VERBOSE is off.
SHORT_COMSTRS_VARIABLE = "IREE_RELINK_SHORTCOMSTRS"


@dataclass(frozen=True)
class FromModel:
    """What ``declare_unlinked_from_model`` declared for a module."""
    model: object           # the model's node
    ops: object             # executables.ops.mlir, from the dumps
    unlinked: object        # unlinked/<model>.vmfb of the same run; None: declared with the
                            # kernels, whose wrappers' placeholders go in (``declare_relinked_module``)


def _short_lines(env) -> dict:
    return {} if env["VERBOSE"] else env[SHORT_COMSTRS_VARIABLE]


def relinkable(env, target: str, subs, replacements: dict, objects: dict) -> bool:
    """Whether RELINK applies to a module of ``target`` with substitutions ``subs``: each an MLIR
    kernel substituted as a source and linking no objects, a wrapped kernel, or an object on CUDA
    or Vulkan; and neither 'release' nor 'verify-release' was asked for."""
    if not env["RELINK"] or not subs or building_as_released():
        return False
    return all(not s.objects and (
        s.mode == "source" and s.key in replacements
        and replacements[s.key].get_suffix() == ".mlir"
        or s.mode == "wrapped" and s.key in replacements
        or s.mode == "object" and s.key in objects and target in OBJECT_TARGETS) for s in subs)


def from_model(env, target: str, subs) -> bool:
    """Whether a module of ``target`` with substitutions ``subs`` is relinked from an unlinked
    module compiled from the model itself: RELINK applies (what ``relinkable`` asks of the
    substitutions, known before their kernels are declared), and the codegen cache is off for
    ``target`` (its stand-ins go in the program)."""
    if not env["RELINK"] or not subs or building_as_released():
        return False
    try:
        if target in codegen_cache.cached_targets(env["EXECUTABLE_CACHE"]):
            return False
    except UserError:
        return False                        # the module's declaration says what is wrong
    return all(not s.objects and (
        s.mode == "source" and (bool(s.passes) or (s.file or "").endswith(".mlir"))
        or s.mode == "wrapped"
        or s.mode == "object" and target in OBJECT_TARGETS) for s in subs)


def declare_unlinked_from_model(env, module, model, *, folder, options, target: str, subs,
                                **overrides) -> FromModel | None:
    """executables.ops.mlir of ``folder`` from the dumps of a compile of ``model`` with
    ``options`` and, on DUMP_KEEPS_BINARIES, unlinked/<model>.vmfb from the same run, where
    ``from_model``; else None. ``module``: the module the build makes of them, which a failure
    names."""
    if not from_model(env, target, subs):
        return None
    short = _short_lines(env)
    spec = {"flags": _compile_flags(env), "module": module.get_path()}
    ops = folder.File(EXECUTABLE_OPS)
    # A wrapped kernel's placeholder is substituted in the unlinked compile: not what to dump.
    if target in DUMP_KEEPS_BINARIES and not any(s.mode == "wrapped" for s in subs):
        made = env.IreeUnlinkedFromModelBuilder(
            [_unlinked_file(folder, module), ops],
            [model, options, spec_value(env, {**spec, "dump": True})], **short, **overrides)
    else:
        made = env.IreeExecutablesFromModel(ops, [model, options, spec_value(env, spec)],
                                            **short, **overrides)
    env.Depends(made, tool_version(env.subst("$IREE_COMPILE"), timeouts=timeouts(env)))
    return FromModel(model, made[-1], made[0] if len(made) > 1 else None)


def _declare_unlinked_with_placeholders(env, module, folder, model, options, subs,
                                        replacements: dict, resolved, short: dict):
    """unlinked/<model>.vmfb compiled from ``model`` with each wrapped kernel's placeholder
    (unlinked/<key>.placeholder.mlir, written by the same step) substituted for its executable."""
    wrapped = sorted(s.key for s in subs if s.mode == "wrapped")
    unlinked = folder.Dir("unlinked")
    made = env.IreeUnlinkedFromModelBuilder(
        [_unlinked_file(folder, module),
         *(unlinked.File(f"{file_name(key)}.placeholder.mlir") for key in wrapped)],
        [model, options, spec_value(env, {"flags": _compile_flags(env),
                                          "module": module.get_path(), "placeholders": wrapped}),
         *([resolved] if wrapped else []), *(replacements[key] for key in wrapped)], **short)
    env.Depends(made, tool_version(env.subst("$IREE_COMPILE"), timeouts=timeouts(env)))
    return made[0]


def _unlinked_file(folder, module):
    return folder.Dir("unlinked").File(f"{Path(str(module)).stem}.vmfb")


def _compile_flags(env) -> list[str]:
    return [str(a) for line in env.subst_list("$IREE_COMPILEFLAGS") for a in line]


def declare_relinked_module(env, module, program, *, target: str, options, assembled_spec: dict,
                            subs, replacements: dict, objects: dict, resolved=(),
                            substitutions=(), unlinked=None, **overrides) -> list | None:
    """``module`` made from the unlinked module of ``program`` and the kernels ``replacements``
    (substitution key -> MLIR node: a kernel, or a wrapper) and ``objects`` (key -> the object
    of an object-mode substitution); ``resolved``: the resolution's resolved.json node;
    ``substitutions``: what checks them, built first; ``unlinked``: the ``FromModel``
    ``declare_unlinked_from_model`` declared, if it did;
    ``overrides``: ASSEMBLE's variables. None where RELINK does not apply (``relinkable``)."""
    if not resolved or not relinkable(env, target, subs, replacements, objects):
        return None
    resolved = resolved[0]
    folder, model = program[0].dir, Path(str(module)).stem
    short = _short_lines(env)
    if unlinked is not None:
        made = unlinked.unlinked or _declare_unlinked_with_placeholders(
            env, module, folder, unlinked.model, options, subs, replacements, resolved, short)
        return _declare_relink(env, module, folder, made, unlinked.model, options, subs,
                               replacements, objects, resolved, substitutions, True, short)
    wrapped = {s.key: replacements[s.key] for s in subs if s.mode == "wrapped"}
    unlinked_program = env.IreeAssembledProgram(
        folder.Dir("unlinked").File(f"{model}.mlir"),
        [program, options, spec_value(env, {
            **assembled_spec, "objects": [], "placeholders": sorted(wrapped),
            "replacements": {key: node.get_path() for key, node in wrapped.items()}}),
         *([resolved] if wrapped else []), *(wrapped[key] for key in sorted(wrapped))],
        **overrides)
    unlinked_program[0].attributes.assembled = True
    unlinked = env.IreeModule(folder.Dir("unlinked").File(f"{model}.vmfb"),
                              [unlinked_program[0], options, unlinked_program[1]],
                              IREE_COMPILEFLAGS=env["IREE_COMPILEFLAGS"] + [relink.UNLINKED])
    return _declare_relink(env, module, folder, unlinked[0], unlinked_program[0], options, subs,
                           replacements, objects, resolved, substitutions, False, short)


def _declare_relink(env, module, folder, unlinked, program, options, subs, replacements: dict,
                    objects: dict, resolved, substitutions, from_model_: bool,
                    short: dict) -> list:
    """EXPORTS, BINARY and RELINK of ``module`` from ``unlinked``; ``program``: what a kernel
    that does not fit is compiled into the module from (the model where ``from_model_``, else
    the unlinked program)."""
    ops = folder.File(EXECUTABLE_OPS)
    flags = _compile_flags(env)
    kernels = []
    modes = {s.key: s.mode for s in subs}
    relinking = folder.Dir("relink")
    for key, kernel in sorted({**replacements, **objects}.items()):
        # An object's EXPORTS is its stand-in, linking a placeholder named like the object.
        linked = {"object": kernel.name} if modes[key] == "object" else {}
        spec = spec_value(env, {"key": key, "flags": flags, "mode": modes[key], **linked})
        exports = [] if modes[key] == "wrapped" else env.IreeRelinkExports(
            relinking.File(f"{file_name(key)}.exports.mlir"), [ops, options, resolved, spec],
            **short)
        kernels += env.IreeRelinkKernel(
            [relinking.File(f"{file_name(key)}.bin"), relinking.File(f"{file_name(key)}.json")],
            [kernel, options, resolved, spec, *exports], **short)
    relinked = env.IreeRelinkModule(module, [unlinked, program, options, spec_value(
        env, {"flags": flags, "from_model": from_model_}), substitutions, *kernels], **short)
    env.Depends(kernels, substitutions)     # substitutions are checked before they are applied
    return relinked
