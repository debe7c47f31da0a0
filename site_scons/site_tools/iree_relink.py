"""SCons tool: modules whose MLIR kernels are relinked into an unlinked module (RELINK=yes).

Methods:
  env.IreeUnlinkedFromModel(module, folder, model, options, target, subs)
      where the module is relinked and the codegen cache is off for its target
      (``from_model``), declares its executables alone (``executables.ops.mlir``)
      from dumps of their sources made by a compile of the model itself, and on
      llvm-cpu the unlinked module in the same run; returns a ``FromModel``, else None.
  env.IreeRelinkedModule(module, program, options, spec, subs, replacements, resolved)
      where RELINK applies to the module (``relinkable``), declares ``module``
      as the model's unlinked module with each replaced executable's binary
      put in (``iree_kernels.module.relink``) and returns it; else returns None.

Per module, beside ``program`` (the front end's executables.mlir):
  unlinked/<model>.vmfb (``from_model``)
                    the model compiled with ``--iree-hal-link-executables=false``
                    in one run: a plain compile's work, once. On llvm-cpu the
                    run dumps the executables' sources on the way; elsewhere
                    (the dump moves their locations into the dumps, which GPU
                    binaries record) a run up to the executable-sources phase
                    dumps them, and the unlinked compile has each wrapped
                    kernel's placeholder (unlinked/<key>.placeholder.mlir)
                    substituted for its executable. Its weights are not written as
                    text, read again and hashed in between, and the front end's
                    program is made only for the steps that read it (dump,
                    check, hotspots, microbenchmarks).
  unlinked/<model>.mlir, .flags, .vmfb (otherwise)
                    the program as ASSEMBLE makes it with nothing replaced (the
                    codegen cache's stand-ins where it is on), compiled with
                    ``--iree-hal-link-executables=false``: each executable's
                    binary a rodata segment of its own. A kernel edit never
                    rebuilds it: it depends on the model and the options.
  relink/<key>.exports.mlir
                    (``EXPORTS``; source and object kernels) the executable the
                    kernel replaces translated alone, without its code: the
                    export ops the unlinked module's host code is compiled for;
                    for an object kernel, public and linking four placeholder
                    bytes that BINARY replaces by the object's as text, so that
                    a kernel edit parses no MLIR in this process. It depends on
                    the model, not the kernel.
  relink/<key>.bin, .json
                    a kernel compiled alone (``BINARY``), and whether the host
                    code of the unlinked module fits it (an MLIR kernel must
                    translate to those export ops; an object is compiled into
                    them).
  the module        (``RELINK``) the unlinked module with the kernels' binaries
                    in their executables' segments: the weights are copied,
                    not parsed or serialized. Where a kernel does not fit, the
                    unlinked program with the kernels in place is compiled
                    instead; either way iree-compile's module (entry for entry).

Relinked: MLIR kernels substituted as sources (edited dumps, derived, from a
folder) linking no objects, wrapped kernels (of every language), and object-mode
kernels on CUDA and Vulkan. The unlinked module is compiled with each wrapper's placeholder
(``relink.placeholder``: on GPUs its objects replaced by four embedded bytes, on llvm-cpu,
which links them with IREE's code, without them and the calls into them): its host code is
the wrapper's, its binary is replaced. A module with any other substitution (MLIR kernels
linking objects) is compiled as
``iree_program`` compiles it, and so is every module of ``scons release``,
whose modules are linked, as a plain iree-compile's are.

Variables: RELINK.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import SCons.Action
import SCons.Builder

from iree_kernels.module import codegen_cache, relink, selection
from iree_kernels.core import toolchains
from iree_kernels.ir.executables import import_bindings_aside
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import put_in_place, remove_quietly, reserve_beside, scratch_folder, write_atomically
from iree_kernels.ir.program_text import (NotSplittable, executable_alone, executables_from_dumps,
                                       executables_only, open_program, resource_lines)
from iree_kernels.scons.kernels import tool_version
from iree_kernels.scons.module import EXECUTABLE_OPS, building_as_released, file_name
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import option_origin, timeouts

# Where an object-mode kernel's binary is IREE's translation of the executable with the object in
# place of its code.
OBJECT_TARGETS = ("cuda", "vulkan")
# Where dumping the executables' sources during a compile leaves its binaries as they are. The
# dump points each executable's locations at its file, and CUDA's and Vulkan's binaries record
# that path in their debug information: there a run of its own dumps them.
DUMP_KEEPS_BINARIES = ("llvm-cpu",)
SHORT_COMSTRS = {"IREE_EXPORTSCOMSTR": "EXPORTS  $TARGET", "IREE_BINARYCOMSTR": "BINARY   $TARGET",
                 "IREE_RELINKCOMSTR": "RELINK   $TARGET", "IREE_UNLINKEDCOMSTR": "IREE     $TARGET",
                 "IREE_SOURCESCOMSTR": "SOURCES  $TARGET"}


@dataclass(frozen=True)
class FromModel:
    """What ``declare_unlinked_from_model`` declared for a module."""
    model: object           # the model's node
    ops: object             # executables.ops.mlir, from the dumps
    unlinked: object        # unlinked/<model>.vmfb of the same run; None: declared with the
                            # kernels, whose wrappers' placeholders go in (``declare_relinked_module``)


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


def declare_unlinked_from_model(env, module, folder, model, options, target: str, subs,
                                **overrides) -> FromModel | None:
    """executables.ops.mlir of ``folder`` from the dumps of a compile of ``model`` with
    ``options`` and, on DUMP_KEEPS_BINARIES, unlinked/<model>.vmfb from the same run, where
    ``from_model``; else None. ``module``: the module the build makes of them, which a failure
    names."""
    if not from_model(env, target, subs):
        return None
    short = {} if env["VERBOSE"] else SHORT_COMSTRS
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


def declare_relinked_module(env, module, program, target: str, options, assembled_spec: dict,
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
    short = {} if env["VERBOSE"] else SHORT_COMSTRS
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


@reporting_user_errors
def compile_unlinked(target, source, env):
    model, options, spec = source[0], source[1], read_spec(source[2])
    module = target[0].abspath
    output = reserve_beside(module)
    flags = [f"@{options}", *spec["flags"], relink.UNLINKED]
    try:
        if spec.get("dump"):
            import_bindings_aside()         # for the listing of what this run dumps
            with scratch_folder(Path(module).parent, "sources") as dumps:
                _run_compile(env, [str(model), *flags, f"--iree-hal-dump-executable-sources-to={dumps}",
                                   "-o", output], [model, options], spec["module"])
                ops = _executables_dumped(env, [model, options], flags, Path(dumps), spec["module"])
            write_atomically(target[1].abspath, ops)
        else:
            _run_compile(env, [str(model), *flags, *_placeholders(spec, source[3:], target[1:]),
                               "-o", output], [model, options], spec["module"])
        put_in_place(output, module)
    finally:
        remove_quietly(output)


def _placeholders(spec: dict, source, target) -> list[str]:
    """Write each wrapped kernel's placeholder (``source``: resolved.json, then the wrappers) to
    ``target``; the flags substituting them for their executables."""
    if not spec["placeholders"]:
        return []
    landed = selection.loads(source[0].get_text_contents())
    flags = []
    for key, wrapper, placeholder in zip(spec["placeholders"], source[1:], target):
        write_atomically(placeholder.abspath, relink.placeholder(wrapper.get_text_contents(),
                                                                    str(wrapper)))
        flags.append(f"--iree-hal-substitute-executable-source="
                     f"{landed[key].executable}={placeholder.get_path()}")
    return flags


@reporting_user_errors
def dump_executables(target, source, env):
    """executables.ops.mlir from the dumps of a compile of the model up to its executables'
    sources; the program it stops at is thrown away, written as bytecode (its weights copied)."""
    model, options, spec = source[0], source[1], read_spec(source[2])
    flags = [f"@{options}", *spec["flags"]]
    import_bindings_aside()                 # for the listing of what this run dumps
    with scratch_folder(target[0].dir.abspath, "sources") as dumps:
        _run_compile(env, [str(model), *flags, "--compile-to=executable-sources",
                           f"--iree-hal-dump-executable-sources-to={dumps}",
                           "--emit-mlir-bytecode", "-o", os.devnull],
                     [model, options], spec["module"])
        ops = _executables_dumped(env, [model, options], flags, Path(dumps), spec["module"])
    write_atomically(target[0].abspath, ops)


def _executables_dumped(env, sources: list, flags: list[str], dumps: Path, module: str) -> str:
    """The executables alone, as the front end's program has them, from the dumps in ``dumps``
    of a compile of ``sources`` (the model, its options) with ``flags``."""
    model = sources[0]
    try:
        return executables_from_dumps(
            {p.name: p.read_text(encoding="utf-8") for p in sorted(dumps.iterdir())},
            lambda keys: resource_lines(_text(model), keys))
    except NotSplittable:
        # Dumps this does not read (or resources the model does not hold as printed): the
        # executables of the front end's program.
        program = dumps / "executables.mlir"
        _run_compile(env, [str(model), *flags, "--compile-to=executable-sources", "-o",
                           str(program)], sources, module)
        return executables_only(program.read_text(encoding="utf-8"))


def _text(node) -> str:
    try:
        return Path(node.abspath).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise NotSplittable("not text") from None


def _run_compile(env, arguments: list[str], sources: list, module: str) -> None:
    """iree-compile with ``arguments``; a failure explained as ``module``'s compile from
    ``sources`` (the program, then its flag files) explains it (``iree_compile``)."""
    try:
        toolchains.run([env.subst("$IREE_COMPILE"), *arguments], doing=f"compile {module}",
                       timeouts=timeouts(env))
    except toolchains.ToolFailed as e:
        if e.signal_number is not None:
            raise                           # a crash says so itself
        where = option_origin(getattr(env.get("SPAWN"), "option_origins", {}), arguments,
                              e.printed)
        if where:                           # an option value the manifest gives
            first = toolchains.printed_error(e.printed) or e.printed
            raise UserError(f"{where}iree-compile: {first}") from None
        raise UserError(env["IREE_EXPLAIN_MODULE_FAILURE"](
            [sources[0].fs.File(module)], sources, env, e.printed)) from None


@reporting_user_errors
def translate_executable(target, source, env):
    ops, options, resolved, spec = source[0], source[1], source[2], read_spec(source[3])
    executable = selection.loads(resolved.get_text_contents())[spec["key"]].executable
    original = executable_alone(ops.get_text_contents(), str(ops), executable).standalone()
    exports = relink.translate_alone(_compiler(env, options, spec), original, executable)
    if spec["mode"] == "object":
        exports = relink.object_stand_in(exports, executable, spec["object"])
    write_atomically(target[0].abspath, exports)


@reporting_user_errors
def compile_kernel(target, source, env):
    kernel, options, resolved, spec = source[0], source[1], source[2], read_spec(source[3])
    executable = selection.loads(resolved.get_text_contents())[spec["key"]].executable
    compiler = _compiler(env, options, spec)
    exports = source[4] if len(source) > 4 else None
    binary = reserve_beside(target[0].abspath)
    try:
        try:
            compiled = _compile_alone(compiler, spec["mode"], Path(str(kernel)), executable,
                                      exports, Path(binary))
        except toolchains.ToolFailed as e:
            if e.signal_number is None:
                first = toolchains.printed_error(e.printed)
                raise UserError(f"{e.summary}: {first}\n{e.printed}" if first
                                else e.message) from None
            # Alone, iree-compile can crash on a kernel it compiles in the module (or crashes
            # on as the module's compile does, which then says so): the module is compiled.
            compiled = relink.CompiledKernel("", f"{e.summary} compiling it alone")
            Path(binary).write_bytes(b"")
        record = {"executable": executable, "variant": compiled.variant,
                  "misfit": compiled.misfit, "kernel": str(kernel), "mode": spec["mode"]}
        write_atomically(target[1].abspath, json.dumps(record, indent=1, sort_keys=True) + "\n")
        put_in_place(binary, target[0].abspath)
    finally:
        remove_quietly(binary)


def _compile_alone(compiler, mode: str, kernel: Path, executable: str, exports,
                   binary: Path) -> relink.CompiledKernel:
    """``exports``: the EXPORTS node (none for a wrapped kernel)."""
    if mode == "wrapped":
        return relink.compile_wrapper(compiler, kernel, binary)
    if mode == "object":
        return relink.compile_object(compiler, kernel, exports.get_text_contents(), executable,
                                     binary, str(exports))
    return relink.compile_kernel(compiler, kernel, executable, exports.get_text_contents(),
                                 binary)


def _compiler(env, options, spec: dict) -> relink.Compiler:
    return relink.Compiler(env.subst("$IREE_COMPILE"), (f"@{options}", *spec["flags"]),
                           timeouts(env))


@reporting_user_errors
def relink_module(target, source, env):
    unlinked, unlinked_program, options, spec, substitutions = source[0], source[1], source[2], \
        read_spec(source[3]), source[4]
    kernels = [(json.loads(Path(record.abspath).read_text(encoding="utf-8")), binary)
               for binary, record in zip(source[5::2], source[6::2])]
    misfits = [(r["kernel"], r["misfit"]) for r, _ in kernels if r["misfit"]]
    if not misfits:
        binaries = {r["executable"]: (r["variant"], Path(b.abspath).read_bytes())
                    for r, b in kernels}
        output = reserve_beside(target[0].abspath)
        try:
            relink.write_relinked(Path(unlinked.abspath), binaries, output)
            put_in_place(output, target[0].abspath)
        finally:
            remove_quietly(output)
        return
    for kernel, why in misfits:
        _say(f"{target[0]}: {kernel} is compiled into the module, not relinked: {why}")
    # The substitution flags, as the module's compile has them: the objects (and, from the model,
    # the sources), and a crash names the substituted executables.
    flags = [f"@{options}", f"@{substitutions}", *spec["flags"], relink.UNLINKED]
    output = reserve_beside(target[0].abspath)
    try:
        if spec["from_model"]:
            _run_compile(env, [str(unlinked_program), *flags, "-o", output],
                         [unlinked_program, options, substitutions], target[0].get_path())
        else:
            _compile_spliced(env, [r for r, _ in kernels if r["mode"] != "object"],
                             unlinked_program, target[0], flags, output)
        put_in_place(output, target[0].abspath)
    finally:
        remove_quietly(output)


def _compile_spliced(env, spliced: list[dict], unlinked_program, module, flags: list[str],
                     output: str) -> None:
    """The unlinked program with the kernels of ``spliced`` in place compiled into ``output``."""
    with open_program(unlinked_program.get_text_contents(), str(unlinked_program),
                      tuple(Path(r["kernel"]).read_text(encoding="utf-8")
                            for r in spliced)) as program:
        for r in spliced:
            program.replace(r["executable"], Path(r["kernel"]).read_text(encoding="utf-8"),
                            r["kernel"])
        assembled = program.text()
    with scratch_folder(module.dir.abspath, "relink") as work:
        written = Path(work) / unlinked_program.name    # iree-compile names what it makes after it
        written.write_text(assembled + "\n", encoding="utf-8")
        _run_compile(env, [str(written), *flags, "--compile-from=executable-sources", "-o", output],
                     [module.fs.File(str(written))], module.get_path())


def _say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def generate(env):
    if "IreeAssembledProgram" not in env["BUILDERS"]:
        env.Tool("iree_program")
    env.SetDefault(
        RELINK=False,
        IREE_EXPORTSCOMSTR="Translating the executable a kernel replaces alone: $TARGET",
        IREE_BINARYCOMSTR="Compiling $SOURCE alone: $TARGET",
        IREE_RELINKCOMSTR="Relinking $TARGET",
        IREE_UNLINKEDCOMSTR="Compiling the model unlinked: $TARGET",
        IREE_SOURCESCOMSTR="Dumping the executables of the model: $TARGET",
    )
    env["BUILDERS"]["IreeUnlinkedFromModelBuilder"] = SCons.Builder.Builder(
        action=SCons.Action.Action(compile_unlinked, "$IREE_UNLINKEDCOMSTR"))
    env["BUILDERS"]["IreeExecutablesFromModel"] = SCons.Builder.Builder(
        action=SCons.Action.Action(dump_executables, "$IREE_SOURCESCOMSTR"))
    env["BUILDERS"]["IreeRelinkExports"] = SCons.Builder.Builder(
        action=SCons.Action.Action(translate_executable, "$IREE_EXPORTSCOMSTR"))
    env["BUILDERS"]["IreeRelinkKernel"] = SCons.Builder.Builder(
        action=SCons.Action.Action(compile_kernel, "$IREE_BINARYCOMSTR"),
        source_scanner=env["IREE_SUBSTITUTION_SCANNER"])    # a wrapper's objects
    env["BUILDERS"]["IreeRelinkModule"] = SCons.Builder.Builder(
        action=SCons.Action.Action(relink_module, "$IREE_RELINKCOMSTR"), suffix=".vmfb")
    env.AddMethod(declare_relinked_module, "IreeRelinkedModule")
    env.AddMethod(declare_unlinked_from_model, "IreeUnlinkedFromModel")


def exists(env):
    return True
