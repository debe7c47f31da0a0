"""SCons tool: iree-compile builders.

Builders:
  IreeExecutableSources  model.mlir + options.flags -> executables.mlir
                         (``--compile-to=executable-sources``: the model's
                         executables before codegen, for inspection)
  IreeModule             model.mlir + options.flags + substitutions.flags -> .vmfb
  IreeExecutableOps      executables.mlir -> executables.ops.mlir: its executables
                         alone, with the resources they use and none of the weights
                         (``program_text.executables_only``), for the steps that
                         read only executables

Sources after the model are flag files passed as ``@file``. A scanner reads
the substitution flag files, so a module depends on every substituted file,
and on every ``#hal.executable.object<{path = ...}>`` those files name.

``$IREE_COMPILECOM`` gets the whole substitution flag file, source
substitutions too, although the program it compiles already has them in
place (``IreeModuleFromProgram``'s ASSEMBLE) and iree-compile, starting at
executable-sources, skips the pass that would apply them. They are there for
whoever reads the command: it names every file that went into the module; a
crash names the substituted executables from it (``toolchains.crash_message``,
tests/e2e/test_hostile_inputs.py); and the same flag files given with the
model itself reproduce the module without the build
(tests/e2e/test_front_end_once.py).
"""
from __future__ import annotations

import os
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Scanner
import SCons.Util

from iree_kernels.ir import executables, translation
from iree_kernels.core import flag_files, toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.object_references import object_paths
from iree_kernels.ir.program import Program
from iree_kernels.ir.program_text import NotSplittable, executables_only, open_program
from iree_kernels.core.files import scratch_folder, write_atomically
from iree_kernels.scons.escaping import program
from iree_kernels.scons.kernels import version_emitter
from iree_kernels.scons.spawn import timeouts, whole_file_command
from iree_kernels.scons.reporting import reporting_user_errors

def _substituted_paths(text: str, kinds: tuple[str, ...]) -> list[str]:
    """The files the substitution flags of ``text`` (a flag file the build wrote) of ``kinds`` name."""
    paths = []
    for flag in flag_files.read(text):
        parsed = flag_files.parse_substitution_flag(flag)
        if parsed and parsed[0] in kinds:
            paths.append(parsed[2])
    return paths


def scan_substitutions(node, env, path):
    """Files a flag file substitutes; files an MLIR executable links as objects.

    A program the build assembled (``node.attributes.assembled``) is not read:
    it weighs what the model's weights do, and every file it links is named
    by the substitution flags beside it.
    """
    if not node.exists() or getattr(node.attributes, "assembled", False):
        return []
    text = node.get_text_contents()
    if node.get_suffix() == ".flags":
        found = _substituted_paths(text, ("source", "object", "configuration"))
    elif node.get_suffix() == ".mlir":
        # As iree-compile looks an object up: from the repository root, then (the search path
        # the substitution flags give a kernel linking objects beside it) the kernel's folder.
        top = env.Dir("#")
        return [top.File(p) if top.File(p).exists() or not node.dir.File(p).exists()
                else node.dir.File(p) for p in object_paths(text)]
    else:
        return []
    top = env.Dir("#")
    return [top.File(p) for p in found]


def scan_source_substitutions(node, env, path):
    """Files a flag file substitutes as sources: all that iree-compile reads up to executable-sources.

    Objects and configurations are read later, and an object a substituted
    source links is named by path in the output, not read.
    """
    if not node.exists() or node.get_suffix() != ".flags":
        return []
    top = env.Dir("#")
    return [top.File(p) for p in _substituted_paths(node.get_text_contents(), ("source",))]


def explain_module_failure(target, source, env, output: str) -> str:
    """One line for a failed module compile; IREE's whole output goes to a file beside the model's.

    Where IREE's errors point into executables of the program (codegen
    failures), the line names the model, the target and each executable with
    its export, as the codegen cache does; so ``scons -k`` prints one line per
    model instead of IREE's dumps of the failing IR.
    """
    module = Path(target[0].get_abspath())
    model, target_name = module.stem, module.parent.name
    log = module.parent / model / "compile-errors.log"
    write_atomically(str(log), output)
    shown = os.path.relpath(log)
    program = str(source[0])
    text = Path(source[0].get_abspath()).read_text(encoding="utf-8", errors="replace")
    failed = translation.failed_executables(output, program, text)
    if failed or translation.executable_lines(text):
        return _explained(module, model, target_name, program, text, failed, output, shown)
    # Compiled from the model: IREE's errors point into the model, not an executable. Where its
    # front end's program fails the same way, that compile names them.
    with scratch_folder(module.parent, "explain") as work:
        found = _failures_in_the_program(env, source, Path(work) / f"{Path(program).stem}.mlir")
        if found:
            return _explained(module, model, target_name, *found, output, shown, own=True)
    return _explained(module, model, target_name, program, text, failed, output, shown)


def _explained(module, model: str, target_name: str, program: str, text: str, failed: dict,
               output: str, shown: str, own: bool = False) -> str:
    """``own``: ``text`` is IREE's own program of the model, nothing replaced in it."""
    if not failed:
        first = toolchains.printed_error(output) or next(
            (line.strip() for line in output.splitlines() if line.strip()), "no output")
        return f"iree-compile failed for model '{model}' on {target_name}: {first}; " \
               f"its whole output: {shown}"
    ours = _executable_texts(text, program)
    front_end = module.parent / model / "executables.mlir"
    theirs = ours if own else _executable_texts(
        front_end.read_text(encoding="utf-8", errors="replace"), str(front_end)) \
        if front_end.is_file() else {}
    own, replaced = [], []
    for name, message in failed.items():
        export = executables.read_executables(ours[name], program)[name].export
        line = translation.failed_executable(name, export, message)
        (own if theirs.get(name) == ours[name] else replaced).append(line)
    if replaced:
        # Not IREE's own executable: a plain iree-compile of the model never saw this text.
        return (f"iree-compile fails for {len(replaced)} executable(s) of model '{model}' on "
                f"{target_name} that this build replaced (a substituted kernel, or a stand-in "
                f"of the codegen cache): {'; '.join(replaced)}"
                + (f"; and for IREE's own: {'; '.join(own)}" if own else "")
                + f". IREE's errors: {shown}")
    return translation.codegen_failure(target_name, model, own, shown)


def _failures_in_the_program(env, source, front_end: Path) -> tuple | None:
    """(program, text, failures) of IREE's own program of ``source[0]`` (a model; the front end
    with the options ``source[1]``, nothing substituted, written to ``front_end``) compiled with
    the flag files ``source[1:]``, where that compile fails at its executables; else None."""
    flags = [f"@{s}" for s in source[1:]]
    compiler = env.subst("$IREE_COMPILE")
    try:
        toolchains.run([compiler, str(source[0]), *flags[:1], "--compile-to=executable-sources",
                        "-o", str(front_end)], timeouts=timeouts(env))
        toolchains.run([compiler, str(front_end), *flags, "--compile-from=executable-sources",
                        "-o", os.devnull], timeouts=timeouts(env))
    except toolchains.ToolFailed as e:
        if front_end.is_file():
            printed = front_end.read_text(encoding="utf-8", errors="replace")
            found = translation.failed_executables(e.printed, str(front_end), printed)
            if found:
                return str(front_end), printed, found
    except UserError:
        pass
    return None


def _executable_texts(text: str, source: str) -> dict[str, str]:
    """Each executable of a program as a file of its own, by name."""
    try:
        texts = _texts_of(open_program(text, source))
    except NotSplittable:
        texts = _texts_of(Program(text, source))
    # Only the op: the bindings add the resources it uses, the text path does not.
    return {name: op.split("\n{-#", 1)[0] for name, op in texts.items()}


def _texts_of(program) -> dict[str, str]:
    with program as parsed:
        return {name: parsed.executable_text(name) for name in parsed.names()}


@reporting_user_errors
def write_executable_ops(target, source, env):
    write_atomically(target[0].abspath, executables_only(source[0].get_text_contents()))


def _flag_file_args(target, source, env, for_signature):
    return [f"@{s}" for s in source[1:]]


def generate(env):
    env.SetDefault(
        IREE_COMPILE=program(toolchains.iree_compile() or "iree-compile"),
        IREE_COMPILEFLAGS=SCons.Util.CLVar(""),
        _IREE_FLAGFILES=_flag_file_args,
        IREE_COMPILECOM="$( $IREE_COMPILE $) ${SOURCES[0]} $_IREE_FLAGFILES $IREE_COMPILEFLAGS -o $TARGET",
        IREE_COMPILECOMSTR="",
        IREE_DUMPCOM="$( $IREE_COMPILE $) ${SOURCES[0]} $_IREE_FLAGFILES --compile-to=executable-sources -o $TARGET",
        IREE_DUMPCOMSTR="",
        IREE_EXECUTABLEOPSCOMSTR="Writing the executables of $SOURCE alone: $TARGET",
    )
    scanner = SCons.Scanner.Scanner(scan_substitutions, name="IreeSubstitutionScanner",
                                    skeys=[".flags", ".mlir"], recursive=True)
    env["IREE_SUBSTITUTION_SCANNER"] = scanner
    env["IREE_EXPLAIN_MODULE_FAILURE"] = explain_module_failure
    env["BUILDERS"]["IreeModule"] = SCons.Builder.Builder(
        action=whole_file_command("IREE_COMPILECOM", "$IREE_COMPILECOMSTR",
                                  explain=explain_module_failure),
        suffix=".vmfb", src_suffix=".mlir", source_scanner=scanner,
        emitter=version_emitter("IREE_COMPILECOM"))
    env["BUILDERS"]["IreeExecutableSources"] = SCons.Builder.Builder(
        action=whole_file_command("IREE_DUMPCOM", "$IREE_DUMPCOMSTR"),
        suffix=".mlir", src_suffix=".mlir", emitter=version_emitter("IREE_DUMPCOM"))
    env["BUILDERS"]["IreeExecutableOps"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_executable_ops, "$IREE_EXECUTABLEOPSCOMSTR"),
        suffix=".mlir", src_suffix=".mlir")
    env["IREE_SOURCE_SUBSTITUTION_SCANNER"] = SCons.Scanner.Scanner(
        scan_source_substitutions, name="IreeSourceSubstitutionScanner", skeys=[".flags"])


def exists(env):
    return env.Detect(env.get("IREE_COMPILE") or toolchains.iree_compile() or "iree-compile")
