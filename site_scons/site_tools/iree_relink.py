"""SCons tool: modules whose MLIR kernels are relinked into an unlinked module (RELINK=yes).

Builders (declared by ``iree_kernels.scons.relinking``, which decides where
RELINK applies; this tool only builds):
  IreeUnlinkedFromModelBuilder  the model -> unlinked/<model>.vmfb [+ executables.ops.mlir]
  IreeExecutablesFromModel      the model -> executables.ops.mlir, from its dumps
  IreeRelinkExports             executables.ops.mlir -> relink/<key>.exports.mlir
  IreeRelinkKernel              a kernel -> relink/<key>.bin, .json
  IreeRelinkModule              the unlinked module + the kernels' binaries -> the module

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
from pathlib import Path

import SCons.Action
import SCons.Builder

from iree_kernels.module import relink, selection
from iree_kernels.core import flag_files, toolchains
from iree_kernels.ir.executables import import_bindings_aside
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import put_in_place, remove_quietly, reserve_beside, scratch_folder, write_atomically
from iree_kernels.ir.program_text import (NotSplittable, executable_alone, executables_from_dumps,
                                       executables_only, open_program, resource_lines)
from iree_kernels.scons import remote
from iree_kernels.scons.nodes import read_spec
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import option_origin, timeouts

SHORT_COMSTRS = {"IREE_EXPORTSCOMSTR": "EXPORTS  $TARGET", "IREE_BINARYCOMSTR": "BINARY   $TARGET",
                 "IREE_RELINKCOMSTR": "RELINK   $TARGET", "IREE_UNLINKEDCOMSTR": "IREE     $TARGET",
                 "IREE_SOURCESCOMSTR": "SOURCES  $TARGET"}

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
                                   "-o", output], [model, options], spec["module"],
                             step=dict(targets=target[:1], outputs=[output], output_folders=[dumps]))
                ops = _executables_dumped(env, [model, options], flags, Path(dumps), spec["module"])
            write_atomically(target[1].abspath, ops)
        else:
            placeholders = _placeholders(spec, source[3:], target[1:])
            _run_compile(env, [str(model), *flags, *placeholders, "-o", output],
                         [model, options], spec["module"],
                         step=dict(targets=target[:1], outputs=[output],
                                   also_read=[p.abspath for p in target[1:]]))
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
        flags.append(flag_files.substitution_flag("source", landed[key].executable,
                                                  placeholder.get_path()))
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


def _run_compile(env, arguments: list[str], sources: list, module: str, step=None) -> None:
    """iree-compile with ``arguments``; a failure explained as ``module``'s compile from
    ``sources`` (the program, then its flag files) explains it (``iree_compile``). ``step``:
    what the run reads and writes, where it may run on a worker (``remote.run_tool``)."""
    try:
        remote.run_tool(env, [env.subst("$IREE_COMPILE"), *arguments], doing=f"compile {module}",
                        timeouts=timeouts(env), **(step or {}))
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
            compiled = relink.CompiledKernel("", e.summary)
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
    if "IREE_SUBSTITUTION_SCANNER" not in env:
        env.Tool("iree_compile")
    env.SetDefault(
        RELINK=False,
        # Given to each relink step where VERBOSE is off (iree_kernels.scons.relinking).
        IREE_RELINK_SHORTCOMSTRS=SHORT_COMSTRS,
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


def exists(env):
    return True
