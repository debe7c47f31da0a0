"""The flag files iree-compile reads as ``@file``: writing them, and reading back what was written.

One flag a line, quoted the way LLVM's GNU-style response files are read
(``llvm::cl::TokenizeGNUCommandLine``): a flag of letters, digits and
``_@%+=:,./$-`` stands bare; any other is put in double quotes with ``\\``
and ``"`` escaped by a backslash. ``read`` inverts ``write`` exactly, and
refuses a line ``write`` could not have written: the build's own readers
(the substitution scanner, the codegen cache's key, a crash message) only
ever read files the build wrote.

The substitution flag (``--iree-hal-substitute-executable-<stage>=NAME=FILE``)
is written and read here too, and nowhere else.

Not for iree-compile's own reading (it tokenizes the file itself), nor for
SCons's command lines (``iree_kernels.scons.escaping``).
"""
from __future__ import annotations

import re

_PLAIN = re.compile(r"[\w@%+=:,./$-]+")
_QUOTED = re.compile(r'"((?:[^"\\]|\\["\\])*)"')
_ESCAPED = re.compile(r'\\(["\\])')


def quote(flag: str) -> str:
    """One flag as one line of a flag file."""
    if _PLAIN.fullmatch(flag):
        return flag
    return '"' + flag.replace("\\", "\\\\").replace('"', '\\"') + '"'


def unquote(line: str) -> str:
    """The flag one line of a flag file holds; ValueError where ``quote`` wrote no such line."""
    if _PLAIN.fullmatch(line):
        return line
    m = _QUOTED.fullmatch(line)
    if not m:
        raise ValueError(f"not a line of a flag file this build writes: {line!r}")
    return _ESCAPED.sub(r"\1", m.group(1))


def write(flags) -> str:
    """A flag file's text: one flag a line."""
    return "".join(quote(flag) + "\n" for flag in flags)


def read(text: str) -> list[str]:
    """The flags of a flag file ``write`` wrote; ValueError for any other text."""
    return [unquote(line) for line in text.splitlines()]


# The stages at which iree-compile substitutes an executable, in the order it applies them.
SUBSTITUTION_STAGES = ("source", "configuration", "object")
_SUBSTITUTION_PREFIX = "--iree-hal-substitute-executable-"


def substitution_flag(stage: str, executable: str, path: str) -> str:
    """The flag substituting ``path`` for ``executable`` at ``stage`` (source, configuration,
    object): IREE splits NAME=FILE at the first '=', so a name holds none."""
    if stage not in SUBSTITUTION_STAGES or "=" in executable:
        raise ValueError(f"no substitution flag for stage {stage!r} and executable {executable!r}")
    return f"{_SUBSTITUTION_PREFIX}{stage}={executable}={path}"


def parse_substitution_flag(flag: str) -> tuple[str, str, str] | None:
    """(stage, executable, path) of a substitution flag ``substitution_flag`` writes; None for
    any other flag."""
    if not flag.startswith(_SUBSTITUTION_PREFIX):
        return None
    stage, equals, value = flag[len(_SUBSTITUTION_PREFIX):].partition("=")
    executable, equals_too, path = value.partition("=")
    if stage not in SUBSTITUTION_STAGES or not equals or not equals_too or not executable \
            or not path:
        return None
    return stage, executable, path
