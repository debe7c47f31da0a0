"""The one exception type for mistakes in a user's input.

A ``UserError`` is printed as a single line naming where the mistake is
(file, line, manifest entry, field), never as a Python traceback.
"""
from __future__ import annotations


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
            where.append(f"{self.file}:{self.line}" if self.line else self.file)
        if self.entry:
            where.append(self.entry)
        if self.field:
            where.append(f"field '{self.field}'")
        prefix = ": ".join(where)
        return f"{prefix}: {self.message}" if prefix else self.message
