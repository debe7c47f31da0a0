"""Reading the TOML files a user writes (manifests, expected outputs) into tables.

One UserError, naming the file and, where tomllib gives it, the line, for a
file that cannot be read, is not a regular file, not UTF-8 or not TOML. Not
for what the tables mean: manifest and expected_outputs check that.
"""
from __future__ import annotations

import os
import re
import tomllib

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import read_text


def read(path: str | os.PathLike, shown: str, what: str) -> tuple[str, dict]:
    """(text, tables) of the TOML file ``path``, named ``shown`` in errors; ``what`` says what
    the file is ("manifest", "expected-outputs file")."""
    text = text_of(path, shown, what)
    return text, parse(text, shown)


def text_of(path: str | os.PathLike, shown: str, what: str) -> str:
    """The text of ``path`` (see read), not parsed yet."""
    try:
        text = read_text(path)
    except OSError as e:
        raise UserError(f"cannot read the {what}: {e.strerror}", file=shown) from None
    except UnicodeDecodeError:
        raise UserError("not UTF-8 text", file=shown) from None
    except ValueError as e:         # a folder, a FIFO, too large
        article = "an" if what[0] in "aeiou" else "a"
        raise UserError(f"{article} {what} {e}", file=shown) from None
    return text


def parse(text: str, shown: str) -> dict:
    """The tables of TOML ``text``; a UserError at the line tomllib names."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        m = re.search(r"line (\d+)", str(e))
        message = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        raise UserError(f"not valid TOML: {message}", file=shown,
                        line=int(m.group(1)) if m else None) from None
