"""The one exception type for mistakes in a user's input.

A ``UserError`` is printed as a single line naming where the mistake is
(file, line, manifest entry, field), never as a Python traceback.
"""
from __future__ import annotations

import difflib
import unicodedata


SHOWN_CHARACTERS = 300      # of a value a message quotes (a 240 KB pipeline was quoted whole)


def shown(text: str) -> str:
    """``text`` with control characters written as escapes (``\\n``), so a message stays one
    line, and cut after SHOWN_CHARACTERS saying how long it is."""
    text = str(text)
    cut = f"... ({len(text)} characters)" if len(text) > SHOWN_CHARACTERS else ""
    return "".join(repr(c)[1:-1] if unicodedata.category(c) == "Cc" else c
                   for c in text[:SHOWN_CHARACTERS]) + cut


SHOWN_OUTPUT = 64 << 10     # characters of a failed tool's output an error message holds


def shown_output(printed: str) -> str:
    """What a tool printed as an error message holds it: its start and end where it is long."""
    if len(printed) <= SHOWN_OUTPUT:
        return printed
    head, tail = printed[:SHOWN_OUTPUT * 3 // 4], printed[-(SHOWN_OUTPUT // 4):]
    return f"{head}\n[... {len(printed) - len(head) - len(tail)} characters not shown ...]\n{tail}"


def closest(name: str, known) -> str:
    """' (did you mean X?)' for the nearest known name, or ''."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


def control_character(text: str) -> str | None:
    """The first control character (newline, tab, escape, ...) in ``text``, or None."""
    return next((c for c in text if unicodedata.category(c) == "Cc"), None)


class UserError(Exception):
    def __init__(self, message: str, *, file: str | None = None,
                 line: int | None = None, entry: str | None = None,
                 field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.file = file
        self.line = line
        self.entry = entry
        self.field = field

    def __str__(self) -> str:
        where = []
        if self.file:
            where.append(f"{shown(self.file)}:{self.line}" if self.line else shown(self.file))
        if self.entry:
            where.append(shown(self.entry))
        if self.field:
            where.append(f"field '{shown(self.field)}'")
        prefix = ": ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message
