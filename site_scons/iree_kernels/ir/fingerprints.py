"""An executable's fingerprint: the SHA-256 of its text with its own name normalized away.

A fingerprint survives IREE's renumbering of dispatches and changes with what the
executable computes; manifests select executables by it, and the codegen cache
keys its entries on the normalized text.

Not for choosing executables (``iree_kernels.module.selection``) nor for the
cache's keys (``iree_kernels.module.codegen_cache``).
"""
from __future__ import annotations

import hashlib
import re

from iree_kernels.ir.program import Program, ProgramExecutable

# What stands for an executable's own name in its normalized text.
PLACEHOLDER = "cached_executable_placeholder"


def normalized(executable: ProgramExecutable) -> str:
    """The executable's text with its own name replaced by the placeholder, declared public.

    Renaming is textual, inside one executable printed on its own: the name is
    the prefix of its exports' and functions' symbols as well as its own.
    """
    text = name_pattern(executable.name).sub(PLACEHOLDER, executable.text)
    return f"hal.executable public @{PLACEHOLDER} {{\n" + text.split("\n", 1)[1]


def name_pattern(name: str) -> re.Pattern:
    """``name`` as a whole symbol: not inside a longer name, not followed by a digit."""
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![0-9])")


def fingerprint(executable: ProgramExecutable) -> str:
    """``sha256:`` and the hex SHA-256 of the executable's text, its own name normalized."""
    return "sha256:" + hashlib.sha256(normalized(executable).encode("utf-8")).hexdigest()


def fingerprints(program: str, source: str = "<program>") -> dict[str, str]:
    """The fingerprint of every executable of an executable-sources program, by name."""
    with Program(program, source) as parsed:
        return {e.name: fingerprint(e) for e in parsed.executables()}
