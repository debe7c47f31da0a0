"""A program at the executable-sources phase edited as text: its weights are never parsed.

iree-compile prints the program it stops at as one ``module`` whose top-level
ops sit two spaces in, each ``hal.executable`` ending at the first line that
is ``  }``, attributes inline. A model's weights are in that text too (as hex),
hundreds of MB of it; parsing and printing them with the MLIR bindings
(``program.Program``) cost seconds on every kernel edit. Here the program is
cut into the spans of its executables and the text between them; a
replacement is parsed on its own, printed as the bindings print it, and put
in the span of the op it replaces. The text between is copied as it is.

``open_program`` gives this where the text has that shape, and
``program.Program`` otherwise (aliases at the top, a replacement using
``dense_resource`` data, which would have to join the program's resource
section): the same interface, the same printed program.

Not for: anything that needs the host code (dispatch sites, specializing).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import EmbeddedObject, Program, ProgramExecutable

_INDENT = "  "
_START = "\n  hal.executable "
_HEADER_RE = re.compile(r'  hal\.executable (?:(private|public|nested) )?@([\w$.-]+) \{\n')
_END = "\n  }\n"
_RESOURCES = "dense_resource<"


class NotSplittable(Exception):
    """The text is not the shape this module edits; use ``program.Program``."""


@dataclass
class _Span:
    name: str
    visibility: str
    start: int                  # offset of the op's first character (after its indent)
    end: int                    # offset just after its closing brace
    text: str                   # the op without the module's indent


def open_program(text: str, source: str = "<program>", replacements: tuple[str, ...] = ()):
    """A ``SplicedProgram`` of ``text`` where possible, else a ``Program``; use as a context manager.

    ``replacements``: texts that will be put in; one using resources needs ``Program``.
    """
    if not any(_RESOURCES in r for r in replacements):
        try:
            return SplicedProgram(text, source)
        except NotSplittable:
            pass
    return Program(text, source)


def executable_alone(text: str, source: str, name: str) -> ProgramExecutable:
    """Executable ``name`` of the program ``text`` (read from ``source``), with the resources it
    uses (``standalone()``): from the text where it can be split, else through the bindings."""
    try:
        with open_program(text, source) as program:
            found = {e.name: e for e in program.executables()}
    except NotSplittable:
        with Program(text, source) as program:
            found = {e.name: e for e in program.executables()}
    if name not in found:
        raise UserError(f"holds no hal.executable @{name}", file=source)
    return found[name]


class SplicedProgram:
    """The parts of ``program.Program`` that ASSEMBLE uses, on the program's text."""

    def __init__(self, text: str, source: str = "<program>") -> None:
        if not text.startswith("module") or not text.rstrip().endswith("}"):
            raise NotSplittable("not one printed module")
        self.source = source
        self._text = text
        self._spans = _spans(text)
        self._replaced: dict[str, str] = {}

    def __enter__(self) -> "SplicedProgram":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def close(self) -> None:
        pass

    def names(self) -> list[str]:
        return list(self._spans)

    def executables(self) -> list[ProgramExecutable]:
        found = []
        for name, span in self._spans.items():
            text = self._replaced.get(name, span.text)
            if _RESOURCES in text:
                raise NotSplittable(f"@{name} uses resources")
            found.append(ProgramExecutable(name, span.visibility, text))
        return found

    def executable_text(self, name: str) -> str:
        return self._replaced.get(name, self._span(name).text)

    def replace(self, name: str, mlir: str, source: str, visibility: str | None = None,
                linked: EmbeddedObject | None = None) -> None:
        """As ``Program.replace``: the op ``@name`` of ``mlir`` in place of this one's."""
        self._span(name)
        with Program(mlir, source) as replacement:
            if name not in replacement.names():
                names = ", ".join(replacement.names()) or "none"
                raise UserError(f"holds no hal.executable @{name} (its executables: {names})",
                                file=source)
            replacement.edit_executable(name, visibility, linked)
            text = replacement.executable_text(name)
        if _RESOURCES in text:
            raise NotSplittable(f"the replacement of @{name} uses resources")
        self._replaced[name] = text

    def is_external(self, name: str) -> bool:
        if "objects([" not in self.executable_text(name):
            return False
        with Program(self.executable_text(name), self.source) as alone:
            return alone.is_external(name)

    def text(self) -> str:
        parts, at = [], 0
        for name, span in self._spans.items():
            if name in self._replaced:
                parts += [self._text[at:span.start],
                          self._replaced[name].replace("\n", "\n" + _INDENT)]
                at = span.end
        parts.append(self._text[at:])
        return "".join(parts).rstrip("\n")

    def _span(self, name: str) -> _Span:
        if name not in self._spans:
            raise UserError(f"holds no hal.executable @{name}", file=self.source)
        return self._spans[name]


def _spans(text: str) -> dict[str, _Span]:
    """Each top-level executable's span; NotSplittable where the text is not iree-compile's print."""
    spans, at = {}, text.find(_START)
    while at >= 0:
        found = _HEADER_RE.match(text, at + 1)
        if not found:
            raise NotSplittable(f"an executable header it does not read at offset {at + 1}")
        end = text.find(_END, found.end() - 1)
        if end < 0:
            raise NotSplittable(f"no end of @{found.group(2)}")
        start, stop = at + 1 + len(_INDENT), end + len(_END) - 1
        spans[found.group(2)] = _Span(found.group(2), found.group(1) or "", start, stop,
                                      text[start:stop].replace("\n" + _INDENT, "\n"))
        at = text.find(_START, stop)
    return spans


_RESOURCE_SECTION = "\n{-#\n  dialect_resources: {\n    builtin: {\n"
_RESOURCE_END = "\n    }\n  }\n#-}"
_RESOURCE_ENTRY_RE = re.compile(r'^      ([\w.$-]+): "0x[0-9A-Fa-f]*",?$')
_USED_RESOURCE_RE = re.compile(r"dense_resource<([\w.$-]+)>")


def executables_only(text: str) -> str:
    """The program cut to its module line, its executables and the resources they use.

    What every step that reads only executables (resolution, checks, wrappers)
    needs, without the weights; the program as it is where its text is not
    the shape ``SplicedProgram`` reads.
    """
    try:
        spans = _spans(text) if text.startswith("module") else None
        if spans is None:
            raise NotSplittable("not one printed module")
        head = text[:text.index("\n") + 1]
        if not head.rstrip().endswith("{"):
            raise NotSplittable("a module line it does not read")
        body = "\n".join(_INDENT + s.text.replace("\n", "\n" + _INDENT) for s in spans.values())
        return f"{head}{body}\n}}\n{_used_resources(text, spans)}"
    except NotSplittable:
        return text


_DUMPED_HEADER_RE = re.compile(r"hal\.executable (?:public |private )?@([\w$.-]+) \{\n")
_NUMBERS_RE = re.compile(r"(\d+)")


def executables_from_dumps(dumps: dict[str, str], resources=lambda keys: {}) -> str:
    """What ``executables_only`` makes of a program, from the files
    ``--iree-hal-dump-executable-sources-to`` writes of its executables (file name -> text), in
    the order of their names' numbers; NotSplittable where a file is not one printed executable.

    Each file holds one ``hal.executable`` printed at the top level, public, and no resources: in
    the program it is private and two spaces in. ``resources(keys)``: the resource entries (key ->
    line) of the keys the executables use, from the model (``resource_lines``). The module line
    is a plain ``module {``: no step reads the program's attributes.
    """
    bodies = {}
    for file, text in dumps.items():
        found = _DUMPED_HEADER_RE.match(text)
        if not found or not text.rstrip().endswith("}") or "\n{-#" in text \
                or found.group(1) in bodies:
            raise NotSplittable(f"{file}: not one printed executable")
        name = found.group(1)
        bodies[name] = text.rstrip("\n").replace(found.group(0),
                                                 f"hal.executable private @{name} {{\n", 1)
    order = sorted(bodies, key=lambda n: [int(p) if p.isdigit() else p
                                          for p in _NUMBERS_RE.split(n)])
    body = "\n".join(_INDENT + bodies[n].replace("\n", "\n" + _INDENT) for n in order)
    used = {key for text in bodies.values() for key in _USED_RESOURCE_RE.findall(text)}
    section = ""
    if used:
        entries = resources(used)
        lines = ",\n".join(entries[key] for key in sorted(used))
        section = f"{_RESOURCE_SECTION[1:]}{lines}{_RESOURCE_END}\n"
    return f"module {{\n{body}\n}}\n{section}"


def resource_lines(text: str, keys: set[str]) -> dict[str, str]:
    """The entries of ``keys`` in the resource section of ``text`` (a printed module, a model as
    an exporter prints it), found without reading the rest; NotSplittable where one is not there."""
    start = text.rfind(_RESOURCE_SECTION)
    if start < 0:
        raise NotSplittable("no resource section it reads")
    found = {}
    for key in keys:
        at = text.find(f"\n      {key}: \"0x", start)
        if at < 0:
            raise NotSplittable(f"no resource {key}")
        line = text[at + 1:text.find("\n", at + 1)]
        if not _RESOURCE_ENTRY_RE.match(line):
            raise NotSplittable(f"a resource entry it does not read: {key}")
        found[key] = line.rstrip(",")
    return found


def _resource_entries(text: str, source: str) -> dict[str, str]:
    """The entries of the resource section at the end of ``text``, by key, as lines."""
    start = text.rfind(_RESOURCE_SECTION)
    end = text.find(_RESOURCE_END, start)
    if start < 0 or end < 0:
        raise NotSplittable(f"{source}: a resource section it does not read")
    entries = {}
    for line in text[start + len(_RESOURCE_SECTION):end].split("\n"):
        found = _RESOURCE_ENTRY_RE.match(line)
        if not found:
            raise NotSplittable(f"{source}: a resource entry it does not read")
        entries[found.group(1)] = line.rstrip(",")
    return entries


def _used_resources(text: str, spans: dict[str, _Span]) -> str:
    """The resource section of ``text`` with only the entries the executables name."""
    used = {key for span in spans.values() for key in _USED_RESOURCE_RE.findall(span.text)}
    if not used:
        return ""
    entries = _resource_entries(text, "the program")
    if not used <= entries.keys():
        raise NotSplittable("a resource the section does not hold")
    lines = ",\n".join(entries[key] for key in sorted(used))
    return f"{_RESOURCE_SECTION[1:]}{lines}{_RESOURCE_END}\n"
