"""Where a key or table lies in a TOML file's text: tomllib reports no positions for values.

The nth header of an entry, then the first line of a field below it; for
errors naming the line a user wrote. Not for reading TOML (``toml_files``).
"""
from __future__ import annotations

import re
from functools import lru_cache

def line_of_header(text: str, pattern: str, nth: int) -> int | None:
    found = _header_lines(text, pattern)
    return found[nth] if nth < len(found) else None


@lru_cache(maxsize=16)
def _header_lines(text: str, pattern: str) -> tuple[int, ...]:
    header = re.compile(rf"^[ \t]*\[[ \t]*{pattern}[ \t]*\]")
    return tuple(n for n, line in enumerate(_lines(text), 1) if header.match(line))


@lru_cache(maxsize=4)
def _lines(text: str) -> tuple[str, ...]:
    return tuple(text.splitlines())


_MODEL_HEADER_RE = re.compile(r'^[ \t]*\[[ \t]*models\.("?)([^"\]\s]+)\1[ \t]*\]')


@lru_cache(maxsize=4)
def model_header_lines(text: str) -> dict[str, int]:
    found = {}
    for n, line in enumerate(_lines(text), 1):
        m = _MODEL_HEADER_RE.match(line)
        if m:
            found.setdefault(m.group(2), n)
    return found


def line_of_field(text: str, start: int | None, key: str) -> int | None:
    """The line of ``key`` in the entry starting at ``start``: ``key = ``, ``key.x = `` or a
    ``[...key]`` sub-table of the entry."""
    lines = _lines(text)
    header = _lines(text)[start - 1].strip() if start and start <= len(lines) else ""
    table = re.match(r"^\[\s*([^\[\]]*?)\s*\]$", header)
    for number in range((start or 1), len(lines) + 1):
        line = lines[number - 1].strip()
        if number > (start or 1) and line.startswith("["):
            if table and re.match(rf"^\[\s*{re.escape(table.group(1))}\s*\.\s*\"?"
                                  rf"{re.escape(key)}\"?\s*[\].]", line):
                return number
            if not (table and line.startswith(f"[{table.group(1)}.")):
                break
            continue
        if re.match(rf"^\"?{re.escape(key)}\"?\s*(=|\.)", line):
            return number
    return start


def field_lines(text: str, start: int | None, entry) -> dict[str, int]:
    if not isinstance(entry, dict):
        return {}
    lines = _lines(text)
    found = {}
    for number in range((start or 1), len(lines) + 1):
        line = lines[number - 1].strip()
        if number > (start or 1) and line.startswith("["):
            break
        m = _KEY_RE.match(line)
        if m and m.group(1) in entry:
            found.setdefault(m.group(1), number)
    return {key: found.get(key, start) for key in entry if found.get(key, start) is not None}


_KEY_RE = re.compile(r'^"?([A-Za-z0-9_-]+)"?\s*=')


def line_of_key(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[*\s*\"?{re.escape(key)}\b", line):
            return number
    return None
