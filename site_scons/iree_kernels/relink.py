"""Relinking: a module rebuilt after a kernel edit by replacing its executables' binaries.

A module compiled with executables unlinked (``UNLINKED``) keeps each
executable's binary in a rodata segment of its own (``vmfb``). An MLIR kernel
put in place of executable X compiles alone to the binary such a module holds
for it (``iree-compile --compile-mode=hal-executable``). The module with the
kernel is then the one without it, X's segment replaced, wherever the host code
made for X fits the kernel: the kernel translates to the same export ops as X
(names, ordinals, layouts, workgroup count regions, launch attributes) under
the same variant. That result is byte for byte the module iree-compile gives
for the program with the kernel in place (tests/e2e/test_relink.py); where the
kernel does not fit, the caller compiles that program. A wrapped kernel fits
the module compiled with its wrapper (``placeholder``); an object substituted
for X on CUDA fits the module compiled with X (``compile_object``: IREE's
translation of X, its code replaced by the object).

Not for: the file format (``vmfb``), or deciding what to rebuild (SCons).
"""
from __future__ import annotations

import concurrent.futures
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import toolchains, vmfb
from .errors import UserError
from .program import EmbeddedObject, Program

UNLINKED = "--iree-hal-link-executables=false"
_VARIANT_RE = re.compile(r"^ *hal\.executable\.variant (?:public |private )?@([A-Za-z0-9_$.\-]+)",
                         re.M)
_EXECUTABLE_RE = re.compile(r"^ *hal\.executable (?:public |private )?@", re.M)
_CODE_RE = re.compile(r"^ *builtin\.module\b", re.M)
_OBJECT_BY_PATH_RE = re.compile(r'#hal\.executable\.object<\{path = ("(?:[^"\\]|\\.)*")\}>')


@dataclass(frozen=True)
class Compiler:
    """iree-compile with the flags a module of the target is compiled with (flag files as @file)."""
    program: str
    flags: tuple[str, ...]
    timeouts: toolchains.Timeouts | None = None

    def run(self, argv: list[str], doing: str, stdin: Path | None = None) -> str:
        return toolchains.run([self.program, *argv, *self.flags], doing=doing,
                              timeouts=self.timeouts, stdin=stdin)


@dataclass(frozen=True)
class CompiledKernel:
    """A kernel compiled for relinking: its variant, and why it cannot be relinked ('' if it can)."""
    variant: str
    misfit: str


def interface(translated: str, source: str = "<translated>") -> str:
    """What a module's host code takes from a translated executable: its text from its name up to
    its code (its visibility is the program's business)."""
    start, code = _EXECUTABLE_RE.search(translated), _CODE_RE.search(translated)
    if start is None or code is None or code.start() < start.end():
        raise UserError(f"{source}: not a translated hal.executable with its code")
    return translated[start.end():code.start()]


def variant(text: str) -> str:
    """The name of the executable's only variant, or '' (none, or several)."""
    found = _VARIANT_RE.findall(text)
    return found[0] if len(found) == 1 else ""


def segment(names: list[str], executable: str, variant_name: str) -> str | None:
    """The rodata segment holding ``executable``'s binary for ``variant_name``: IREE names it
    ``<executable>_<variant>.<ext>`` with every character but [A-Za-z0-9_] written '_'.
    None where no segment or more than one is so named."""
    stem = re.sub(r"[^A-Za-z0-9_]", "_", f"{executable}_{variant_name}")
    found = [n for n in names if n.rpartition(".")[0] == stem]
    return found[0] if len(found) == 1 else None


def placeholder(wrapper: str) -> str:
    """A wrapped kernel's hal.executable with each object it links by path replaced by four zero
    bytes embedded in it: what an unlinked module is compiled with in its place, so that the
    module depends on the wrapper's export ops and not on the kernel (GPU targets embed the
    object as it is; the relink puts the kernel's binary in its place)."""
    return _OBJECT_BY_PATH_RE.sub(
        lambda m: f'#hal.executable.object<{{path = {m.group(1)}, '
                  f'data = dense<[0, 0, 0, 0]> : vector<4xi8>}}>', wrapper)


def compile_wrapper(compiler: Compiler, wrapper: Path, binary: Path) -> CompiledKernel:
    """Compile a wrapped kernel's hal.executable alone into ``binary``. Its export ops are the
    ones the unlinked module was compiled with (``placeholder``): it always fits."""
    compiler.run(["--compile-mode=hal-executable", str(wrapper), "-o", str(binary)],
                 f"compile {wrapper} alone")
    return CompiledKernel(variant(wrapper.read_text(encoding="utf-8")), "")


def compile_object(compiler: Compiler, obj: Path, original: str, executable: str,
                   binary: Path) -> CompiledKernel:
    """Compile ``original`` (the executable as the model has it) alone with its code replaced by
    the object ``obj``, into ``binary``: what ``--iree-hal-substitute-executable-object`` makes
    of it, IREE's own export ops (launch shape) kept. Its host code is the unlinked module's."""
    with tempfile.TemporaryDirectory(prefix="iree-relink-") as work:
        source, translated = Path(work) / "original.mlir", Path(work) / "translated.mlir"
        source.write_text(original, encoding="utf-8")
        compiler.run(_translation(source, translated),
                     f"translate executable '{executable}' alone")
        with Program(translated.read_text(encoding="utf-8"), str(translated)) as program:
            exports = program.without_code(executable)
        with Program(exports, str(translated)) as program:
            program.edit_executable(executable, "public", EmbeddedObject(obj.name, obj.read_bytes()))
            source.write_text(program.executable_text(executable), encoding="utf-8")
        # From standard input: the export's debug location names <stdin>, as a module compiled
        # from it does; only its line differs (the executable's place in the program).
        compiler.run(["--compile-mode=hal-executable", "-", "-o", str(binary)],
                     f"compile executable '{executable}' with {obj} alone", stdin=source)
        return CompiledKernel(variant(exports), "")


def compile_kernel(compiler: Compiler, kernel: Path, original: str, binary: Path) -> CompiledKernel:
    """Compile ``kernel`` (an MLIR hal.executable) alone into ``binary``; whether it fits the host
    code a module has for ``original``, the executable it replaces, as the model has it.

    Three iree-compile runs at once: the binary, and each executable translated
    alone, whose export ops are compared.
    """
    with tempfile.TemporaryDirectory(prefix="iree-relink-") as work:
        work = Path(work)
        (work / "original.mlir").write_text(original, encoding="utf-8")
        runs = {
            "binary": (["--compile-mode=hal-executable", str(kernel), "-o", str(binary)],
                       f"compile {kernel} alone"),
            "kernel": (_translation(kernel, work / "kernel.translated.mlir"),
                       f"translate {kernel} alone"),
            "original": (_translation(work / "original.mlir", work / "original.translated.mlir"),
                         "translate the executable it replaces alone"),
        }
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            done = {what: pool.submit(compiler.run, *run) for what, run in runs.items()}
            done["binary"].result()         # the kernel's own errors first
            done["kernel"].result()
            try:
                done["original"].result()
            except UserError as e:
                return CompiledKernel(variant(original), "IREE cannot translate the executable "
                                      f"it replaces: {toolchains.printed_error(str(e)) or e}")
        theirs = interface((work / "original.translated.mlir").read_text(encoding="utf-8"))
        ours = interface((work / "kernel.translated.mlir").read_text(encoding="utf-8"), str(kernel))
    name = variant(ours)
    if not name or name != variant(theirs):
        return CompiledKernel(name, "its variant is not the one the model's executable has")
    if ours != theirs:
        return CompiledKernel(name, "it translates to other export ops (launch shape, layout or "
                              "workgroup count) than the executable it replaces")
    return CompiledKernel(name, "")


def _translation(source: Path, output: Path) -> list[str]:
    return [str(source), "--compile-from=executable-sources", "--compile-to=executable-targets",
            "-o", str(output)]


def relinked(base: bytes, binaries: dict[str, tuple[str, bytes]]) -> bytes:
    """``base`` (an unlinked module) with each executable's binary replaced: executable ->
    (variant, binary). A UserError where the module has no single segment for one."""
    names = vmfb.segment_names(base)
    replacements = {}
    for executable, (variant_name, data) in sorted(binaries.items()):
        found = segment(names, executable, variant_name)
        if found is None:
            raise UserError(f"the unlinked module has no single rodata segment for executable "
                            f"'{executable}' ({variant_name})")
        replacements[found] = data
    return vmfb.replace_segments(base, replacements)
