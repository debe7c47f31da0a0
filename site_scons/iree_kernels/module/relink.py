"""Relinking: a module rebuilt after a kernel edit by replacing its executables' binaries.

A module compiled with executables unlinked (``UNLINKED``) keeps each
executable's binary in a rodata segment of its own (``vmfb``). An MLIR kernel
put in place of executable X compiles alone to the binary such a module holds
for it (``iree-compile --compile-mode=hal-executable``). The module with the
kernel is then the one without it, X's segment replaced, wherever the host code
made for X fits the kernel: the kernel translates to the same export ops as X
(names, ordinals, layouts, workgroup count regions, launch attributes) under
the same variant. That result is the module iree-compile gives for the program
with the kernel in place, entry for entry byte for byte, the FlatBuffer's
offsets to the segments that moved aside (tests/e2e/test_relink.py); where the
kernel does not fit, the caller compiles that program. A wrapped kernel fits
the module compiled with its wrapper (``placeholder``); an object substituted
for X on CUDA fits the module compiled with X (``compile_object``: IREE's
translation of X, its code replaced by the object).

Not for: the file format (``vmfb``), or deciding what to rebuild (SCons).
"""
from __future__ import annotations

import concurrent.futures
import mmap
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.ir import vmfb
from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import EmbeddedObject, Program

UNLINKED = "--iree-hal-link-executables=false"
_VARIANT_RE = re.compile(r"^ *hal\.executable\.variant (?:public |private )?@([A-Za-z0-9_$.\-]+)",
                         re.M)
_EXECUTABLE_RE = re.compile(r"^ *hal\.executable (?:public |private )?@", re.M)
_OBJECT_BY_PATH_RE = re.compile(r'#hal\.executable\.object<\{path = ("(?:[^"\\]|\\.)*")\}>')
# What object_stand_in links: four bytes that are no splat, and how MLIR prints them.
_PLACEHOLDER_BYTES = bytes([1, 2, 3, 4])
_CPU_VARIANT_RE = re.compile(r'#hal\.executable\.target<"llvm-cpu"')
_PLACEHOLDER_PRINTED = "dense<[1, 2, 3, 4]> : vector<4xi8>"


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


def exports(translated: str, executable: str, source: str = "<translated>") -> str:
    """Executable ``executable`` of the translated program ``translated`` without its code, as a
    file of its own: the export ops, as codegen made them, that a module's host code is compiled
    for; and the variant an object can be linked into."""
    with Program(translated, source) as program:
        return program.without_code(executable)


def interface(exports_text: str, source: str = "<exports>") -> str:
    """What the host code takes from an executable's ``exports``: their text from the name on
    (its visibility is the program's business)."""
    start = _EXECUTABLE_RE.search(exports_text)
    if start is None:
        raise UserError(f"{source}: not a hal.executable")
    return exports_text[start.end():]


def translate_alone(compiler: Compiler, original: str, executable: str) -> str:
    """IREE's translation of ``original`` (the executable as the model has it) alone, without
    its code (``exports``)."""
    with tempfile.TemporaryDirectory(prefix="iree-relink-") as work:
        source, translated = Path(work) / "original.mlir", Path(work) / "translated.mlir"
        source.write_text(original, encoding="utf-8")
        compiler.run(_translation(source, translated),
                     f"translate executable '{executable}' alone")
        return exports(translated.read_text(encoding="utf-8"), executable, str(translated))


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


def placeholder(wrapper: str, source: str = "<wrapper>") -> str:
    """A wrapped kernel's hal.executable as an unlinked module is compiled with in its place, so
    that the module depends on the wrapper's export ops and not on the kernel (the relink puts
    the kernel's binary in its place): on GPU targets, which embed an object as it is, each
    object it links by path replaced by four zero bytes embedded in it; on llvm-cpu, which links
    objects with IREE's code, without its objects and the calls to what they provide."""
    if _CPU_VARIANT_RE.search(wrapper):
        with Program(wrapper, source) as program:
            name, = program.names()
            program.without_imports(name)
            return program.executable_text(name)
    return _OBJECT_BY_PATH_RE.sub(
        lambda m: f'#hal.executable.object<{{path = {m.group(1)}, '
                  f'data = dense<[0, 0, 0, 0]> : vector<4xi8>}}>', wrapper)


def compile_wrapper(compiler: Compiler, wrapper: Path, binary: Path) -> CompiledKernel:
    """Compile a wrapped kernel's hal.executable alone into ``binary``. Its export ops are the
    ones the unlinked module was compiled with (``placeholder``): it always fits."""
    compiler.run(["--compile-mode=hal-executable", str(wrapper), "-o", str(binary)],
                 f"compile {wrapper} alone")
    return CompiledKernel(variant(wrapper.read_text(encoding="utf-8")), "")


def object_stand_in(exports_text: str, executable: str, object_name: str) -> str:
    """The executable whose translation without its code is ``exports_text``
    (``translate_alone``), public and linking a placeholder object named ``object_name``:
    what ``compile_object`` puts an object's bytes in as text, without the MLIR bindings."""
    with Program(exports_text, "<exports>") as program:
        program.edit_executable(executable, "public", EmbeddedObject(object_name,
                                                                     _PLACEHOLDER_BYTES))
        return program.executable_text(executable)


def compile_object(compiler: Compiler, obj: Path, stand_in: str, executable: str,
                   binary: Path, source: str = "<stand-in>") -> CompiledKernel:
    """Compile ``stand_in`` (``object_stand_in``) with the bytes of the object ``obj`` in place
    of its placeholder, into ``binary``: what ``--iree-hal-substitute-executable-object`` makes
    of the executable, IREE's own export ops (launch shape) kept. Its host code is the
    unlinked module's."""
    placeholder = f'#hal.executable.object<{{path = "{obj.name}", data = {_PLACEHOLDER_PRINTED}}}>'
    if stand_in.count(placeholder) != 1:
        raise UserError(f"not a stand-in for executable '{executable}' linking {obj.name}; "
                        "remove it and build again", file=source)
    text = stand_in.replace(placeholder, EmbeddedObject(obj.name, obj.read_bytes()).text())
    with tempfile.TemporaryDirectory(prefix="iree-relink-") as work:
        source = Path(work) / "object.mlir"
        source.write_text(text, encoding="utf-8")
        # From standard input: the export's debug location names <stdin>, as a module compiled
        # from it does; only its line differs (the executable's place in the program).
        compiler.run(["--compile-mode=hal-executable", "-", "-o", str(binary)],
                     f"compile executable '{executable}' with {obj} alone", stdin=source)
    return CompiledKernel(variant(stand_in), "")


def compile_kernel(compiler: Compiler, kernel: Path, executable: str, exports_text: str,
                   binary: Path) -> CompiledKernel:
    """Compile ``kernel`` (an MLIR hal.executable) alone into ``binary``; whether it fits the host
    code a module has for the executable whose translation without its code is ``exports_text``
    (``translate_alone``): both runs at once, the binary and the kernel translated alone."""
    with tempfile.TemporaryDirectory(prefix="iree-relink-") as work:
        translated = Path(work) / "kernel.translated.mlir"
        runs = {"binary": (["--compile-mode=hal-executable", str(kernel), "-o", str(binary)],
                           f"compile {kernel} alone"),
                "translation": (_translation(kernel, translated), f"translate {kernel} alone")}
        with concurrent.futures.ThreadPoolExecutor(len(runs)) as pool:
            done = {what: pool.submit(compiler.run, *run) for what, run in runs.items()}
            done["binary"].result()         # the kernel's own errors first
            done["translation"].result()
        ours = exports(translated.read_text(encoding="utf-8"), executable, str(kernel))
    name = variant(ours)
    if not name or name != variant(exports_text):
        return CompiledKernel(name, "its variant is not the one the model's executable has")
    if interface(ours, str(kernel)) != interface(exports_text):
        return CompiledKernel(name, "it translates to other export ops (launch shape, layout or "
                              "workgroup count) than the executable it replaces")
    return CompiledKernel(name, "")


def _translation(source: Path, output: Path) -> list[str]:
    return [str(source), "--compile-from=executable-sources", "--compile-to=executable-targets",
            "-o", str(output)]


def write_relinked(base: Path, binaries: dict[str, tuple[str, bytes]], output: str) -> None:
    """Write to ``output`` ``base`` (an unlinked module) with each executable's binary replaced:
    executable -> (variant, binary). What is not replaced, the weights, is copied file to file.
    A UserError where the module has no single segment for one."""
    with open(base, "rb") as source, \
            mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ) as content:
        names = vmfb.segment_names(content)
        replacements = {}
        for executable, (variant_name, data) in sorted(binaries.items()):
            found = segment(names, executable, variant_name)
            if found is None:
                raise UserError(f"the unlinked module {base} has no single rodata segment for "
                                f"executable '{executable}' ({variant_name})")
            replacements[found] = data
        with open(output, "wb", buffering=0) as out:
            for part in vmfb.pieces(content, replacements):
                if isinstance(part, range):
                    _copy(source.fileno(), out, part, content)
                else:
                    out.write(part)


def _copy(source: int, out, part: range, content) -> None:
    """Bytes ``part`` of the file ``source`` appended to ``out``, by the kernel where it can."""
    at = part.start
    try:
        while at < part.stop:
            copied = os.copy_file_range(source, out.fileno(), part.stop - at, at)
            if copied == 0:
                break
            at += copied
    except OSError:
        pass                        # another file system, or no copy_file_range: copied here
    if at < part.stop:
        out.write(memoryview(content)[at:part.stop])
