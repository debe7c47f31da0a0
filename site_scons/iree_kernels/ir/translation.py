"""Which executables IREE's codegen fails on, from its errors, and translating the others anyway.

IREE 3.13's codegen fails on some executables of real models (many
convolutions on CUDA); one failure fails a whole iree-compile run, with errors
that point at lines of the file it read. This module maps those lines back to
the executables they lie in, and translates a program's executables on their
own (``--compile-to=executable-targets`` of a file holding only them), leaving
out the ones IREE fails on and compiling the rest again.

Not for: the per-executable codegen cache (``codegen_cache``), which keys and
stores what it translates.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import ProgramExecutable

_ERROR_AT_RE = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):\d+: error: (?P<message>.*)$", re.M)
_EXECUTABLE_RE = re.compile(
    r'^ *hal\.executable (?:(?:private|public|nested) )?@(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<name>[\w$.-]+))',
    re.M)
_VISIBILITY_RE = re.compile(r"^hal\.executable (?:(?:private|public|nested) )?")


def executable_lines(text: str) -> list[tuple[int, str]]:
    """(first line, name) of every ``hal.executable`` printed in ``text``, in order."""
    found = []
    for m in _EXECUTABLE_RE.finditer(text):
        name = m.group("name") or m.group("quoted").encode().decode("unicode_escape")
        found.append((text.count("\n", 0, m.start()) + 1, name))
    return found


def failed_executable(name: str, export, message: str) -> str:
    """One executable IREE could not compile, as the failure messages name it."""
    return f"{name} (export {export.name}, {export.layout.describe()}): {message}"


def codegen_failure(target: str, model: str, failed: list[str], log: str) -> str:
    """The line saying IREE's codegen fails for executables of ``model`` (``failed``:
    failed_executable lines); ``log`` holds IREE's errors."""
    return (f"IREE's {target} codegen fails for {len(failed)} executable(s) of model "
            f"'{model}': {'; '.join(failed)}. A wrapped kernel (mode = \"wrapped\") replaces "
            f"an executable without IREE compiling it. IREE's errors: {log}")


def failed_executables(output: str, file: str, text: str) -> dict[str, str]:
    """Executable name -> IREE's first error about it, for ``output``'s errors at lines of ``file``.

    ``text``: what ``file`` holds. Errors at lines outside every executable
    (the host program) are not an executable's and are left out.
    """
    starts = executable_lines(text)
    ends = [first for first, _ in starts[1:]] + [text.count("\n") + 2]
    failed: dict[str, str] = {}
    for error in _ERROR_AT_RE.finditer(output):
        if error.group("file") != file:
            continue
        line = int(error.group("line"))
        for (first, name), end in zip(starts, ends):
            if first <= line < end and _inside(text, first, line):
                failed.setdefault(name, error.group("message").strip())
                break
    return failed


def _inside(text: str, first: int, line: int) -> bool:
    """Whether ``line`` is before the end of the executable starting at ``first`` (its closing ``}``)."""
    lines = text.split("\n")
    indent = len(lines[first - 1]) - len(lines[first - 1].lstrip())
    for number in range(first, line):
        current = lines[number] if number < len(lines) else ""
        if current.strip() == "}" and len(current) - len(current.lstrip()) == indent:
            return False
    return True


@dataclass
class Translation:
    """The executables IREE translated (one MLIR module's text), and why the others failed."""
    text: str
    failures: dict[str, str] = field(default_factory=dict)    # name -> IREE's first error
    log: str = ""                                              # IREE's output of failed runs


def translate(compile_: Callable[[list[str]], None], executables: list[ProgramExecutable],
              work: Path, resources: Callable[[list[str]], str] = lambda names: "") -> Translation:
    """Translate ``executables`` apart from their program, leaving out those IREE fails on.

    ``compile_(argv)``: runs iree-compile with the model's options and ``argv``,
    raising UserError with its output. One run where all translate; after a
    failure, one more without the executables its errors point at, until the
    rest translate. An error that points at no executable is raised as it is.
    ``resources(names)``: the resource section those executables use
    (``Program.resources``), written after them.
    """
    work.mkdir(parents=True, exist_ok=True)
    sources, translated = work / "executables.sources.mlir", work / "executables.targets.mlir"
    left = list(executables)
    failures, log = {}, []
    while left:
        text = "\n".join(_VISIBILITY_RE.sub("hal.executable public ", e.text, count=1)
                         for e in left) + "\n"
        if any(e.resources for e in left):
            text += resources([e.name for e in left]) + "\n"
        sources.write_text(text, encoding="utf-8")
        try:
            compile_([str(sources), "--compile-from=executable-sources",
                      "--compile-to=executable-targets", "-o", str(translated)])
            return Translation(translated.read_text(encoding="utf-8"), failures, "\n".join(log))
        except UserError as e:
            failed = failed_executables(str(e), str(sources), text)
            if not failed:
                raise
            failures.update(failed)
            log.append(str(e))
            left = [e for e in left if e.name not in failed]
    return Translation("module {\n}\n", failures, "\n".join(log))
