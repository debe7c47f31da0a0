"""Kernels derived from a model's own executables by iree-opt pass pipelines (``passes``).

The first workflow of IREE's substitution flags: dump an executable's source,
run passes over it, substitute the result. Here the build does it, from the
model's executable-sources program, so the kernel follows the model: a
re-exported model derives it again. The result must be the executable it
replaces (one ``hal.executable`` of the same name, the same exports and
layouts); it is then substituted as any source kernel. Not for: reading
manifests (``manifest``), the SCons step (``site_tools/iree_opt.py``).
"""
from __future__ import annotations

import os
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import scratch_folder
from iree_kernels.ir.executables import Executable, read_executables
from iree_kernels.project.records import Substitution


def iree_opt(compiler: str | None = None) -> str | None:
    """$IREE_OPT, else the iree-opt beside ``compiler`` (an iree-compile), else the installed
    iree-base-compiler's."""
    if os.environ.get("IREE_OPT"):
        return os.environ["IREE_OPT"]
    if compiler:
        beside = Path(toolchains.real_program(compiler)).with_name("iree-opt")
        if beside.is_file():
            return str(beside)
    return toolchains._native("iree.compiler", "_mlir_libs", "iree-opt")


def derive(program: str, flags: list[str], sub: Substitution, source: str, original: Executable,
           dumped: str, work: str, timeouts: toolchains.Timeouts | None = None) -> str:
    """The text ``sub``'s pipelines make of ``source`` (the executable's dumped text, in ``dumped``).

    Each pipeline is one iree-opt run (its time limit: IREE_COMPILE_TIMEOUT) on
    what the one before made; ``work``: a folder for the steps between. Errors
    are one line naming the manifest entry, the pipeline and iree-opt's first error.
    """
    text, given = source, dumped
    for number, pipeline in enumerate(sub.passes, 1):
        made = os.path.join(work, f"step{number}.mlir")
        try:
            toolchains.run([program, *flags, f"--pass-pipeline={pipeline}", given, "-o", made],
                           file=dumped, doing="run the pipeline", timeouts=timeouts)
        except UserError as e:
            first = toolchains.printed_error(e.message) or e.message.splitlines()[0]
            raise sub.origin.error(f"iree-opt pipeline '{pipeline}' fails on executable "
                                   f"'{original.name}': {_trimmed(first)}", "passes") from None
        text, given = Path(made).read_text(encoding="utf-8"), made
    check_derived(text, sub, original)
    return text


def _trimmed(error: str) -> str:
    """iree-opt's error line without the location of a file the user never saw."""
    for prefix in ("<unknown>:0: ",):
        error = error.removeprefix(prefix)
    return error


def check_derived(text: str, sub: Substitution, original: Executable) -> None:
    """The derived text is one ``hal.executable`` named as ``original``, with its exports and layouts."""
    try:
        found = read_executables(text, "the derived kernel")
    except UserError as e:
        first = toolchains.printed_error(e.message) or e.message.splitlines()[-1]
        raise sub.origin.error(f"the pipelines' output does not parse: {first}",
                               "passes") from None
    if list(found) != [original.name]:
        raise sub.origin.error(f"the pipelines must leave one hal.executable @{original.name}; "
                               f"they left {', '.join('@' + n for n in found) or 'none'}",
                               "passes")
    derived = found[original.name]
    before = [(e.name, e.layout) for e in original.exports]
    after = [(e.name, e.layout) for e in derived.exports]
    if before != after:
        def shown(exports):
            return "; ".join(f"{n} ({layout.describe()})" for n, layout in exports) or "none"
        raise sub.origin.error(f"the pipelines changed executable '{original.name}''s exports "
                               f"or layouts: {shown(before)} became {shown(after)}", "passes")


def derive_in_folder(program: str, flags: list[str], sub: Substitution, source: str,
                     original: Executable, dumped: str,
                     timeouts: toolchains.Timeouts | None = None) -> str:
    """``derive`` with a temporary work folder beside ``dumped``."""
    with scratch_folder(os.path.dirname(os.path.abspath(dumped)), "derive") as work:
        return derive(program, flags, sub, source, original, dumped, work, timeouts)
