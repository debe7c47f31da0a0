"""Which iree-compile flags and iree-opt pass pipelines a manifest may give: none that runs a
program, loads a plugin, or reads or writes a file the build does not track.

A model's ``options`` reach iree-compile and a derived kernel's ``passes`` reach
iree-opt as written. IREE's own flags and passes can start programs
(``--iree-hal-preprocess-executables-with``, the pass
``iree-hal-preprocess-executables-with-tool{command=...}``, linker paths),
load plugins, and read or write any path (dump folders, transform libraries,
reproducers). Those are refused by the words of their names, which IREE and
LLVM name consistently; tests/unit/test_compiler_flags.py holds the rule
against every flag and pass option IREE's own help lists, so one added by a
new IREE release is caught. The flags whose files the build tracks
(``option_files.FILE_FLAGS``) stay, with their paths kept inside the repo.

Not for: which files options name (``option_files``), reading manifests (``manifest``).
"""
from __future__ import annotations

import posixpath
import re

from iree_kernels.project.option_files import FILE_FLAGS, files_named

# Words that mark a flag or pass option naming a path or a program, or writing output.
_RISKY_WORDS = frozenset({
    "path", "paths", "file", "files", "filename", "dir", "directory", "dump", "plugin",
    "linker", "library", "reproducer", "output", "command", "tool", "prefix", "log",
    "remarks", "spec", "profile", "vocab", "replay", "csv", "summary", "pipeline",
    "ptxas", "bitcode", "bc", "exec", "import", "export", "metallib", "load",
    "parameters", "splat", "substitute", "listing", "binary", "toolkit", "opts", "cmd", "link",
    "interpreter",
})
# Last words that mark one: '...-to=DIR', '...-from=DIR', '...-with=TOOL'.
_RISKY_LAST = frozenset({"to", "from", "with"})
_FLAG_RE = re.compile(r"^--?([A-Za-z0-9][A-Za-z0-9_.-]*)(=.*)?$", re.S)
_PIPELINE_FLAGS = ("iree-preprocessing-pass-pipeline",)


def risky_name(name: str) -> bool:
    """Whether a flag's or pass option's name says it names a path or a program."""
    words = re.split(r"[-_.]", name.lower())
    return bool(_RISKY_WORDS.intersection(words)) or words[-1] in _RISKY_LAST


def refused_flag(flag: str) -> str | None:
    """Why a manifest may not pass ``flag`` to iree-compile; None where it may."""
    match = _FLAG_RE.match(flag)
    if not match:
        return None             # no option of iree-compile's: the check of options names it
    name, value = match.group(1), (match.group(2) or "=")[1:]
    if not name.startswith(("iree-", "mlir-")):
        return ("is not one of IREE's or MLIR's flags (--iree-*, --mlir-*): the LLVM flags "
                "iree-compile also takes can read and write files (docs/safety.md)")
    if name in FILE_FLAGS:
        for path, _ in files_named([flag]):
            if posixpath.isabs(path) or ".." in path.split("/") or "\\" in path:
                return (f"names '{path}', outside the repository: the files options name "
                        "are paths relative to the repository root, inside it")
        return None
    if name in _PIPELINE_FLAGS:
        why = refused_pipeline(value)
        return f"runs a pass pipeline that {why}" if why else None
    if risky_name(name):
        return ("can run a program, load a plugin, or read or write a file the build does "
                "not track (docs/safety.md)")
    return None


def refused_pipeline(pipeline: str) -> str | None:
    """Why a manifest may not give iree-opt ``pipeline``; None where it may."""
    try:
        passes = pass_options(pipeline)
    except ValueError as e:
        return str(e)
    for name, options in passes:
        if risky_name(name):
            return (f"uses the pass '{name}', which can run a program or read or write a file "
                    "(docs/safety.md)")
        for option in options:
            if risky_name(option):
                return (f"gives the pass '{name}' the option '{option}', which names a path, "
                        "a program or a pipeline (docs/safety.md)")
    return None


def pass_options(pipeline: str) -> list[tuple[str, list[str]]]:
    """Every pass (or anchor) a textual pipeline names, with its options' names, in order.

    ``builtin.module(func.func(canonicalize{max-iterations=3}), cse)`` gives
    ``[("builtin.module", []), ("func.func", []), ("canonicalize", ["max-iterations"]),
    ("cse", [])]``. A ValueError names what is malformed.
    """
    found: list[tuple[str, list[str]]] = []
    position, end = 0, len(pipeline)
    while position < end:
        char = pipeline[position]
        if char in " \t\n,()":
            position += 1
            continue
        name = re.match(r"[A-Za-z0-9_.$-]+", pipeline[position:])
        if not name:
            raise ValueError(f"holds '{char}' where a pass name was expected")
        position += name.end()
        options: list[str] = []
        if position < end and pipeline[position] == "{":
            block_end = _closing(pipeline, position)
            options = _option_names(pipeline[position + 1:block_end])
            position = block_end + 1
        found.append((name.group(0), options))
    return found


def _closing(text: str, start: int) -> int:
    """The index of the brace closing the one at ``start``, skipping quoted text."""
    depth, position, quote = 0, start, ""
    while position < len(text):
        char = text[position]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return position
        position += 1
    raise ValueError("has an option block '{' that is not closed")


def _option_names(block: str) -> list[str]:
    """The names of the options in a pass's ``{name=value name2={...}}`` block."""
    names, position = [], 0
    while position < len(block):
        if block[position].isspace():
            position += 1
            continue
        name = re.match(r"[A-Za-z0-9_.-]+", block[position:])
        if not name:
            raise ValueError(f"holds '{block[position]}' where a pass option was expected")
        names.append(name.group(0))
        position += name.end()
        if position < len(block) and block[position] == "=":
            position += 1
            if position < len(block) and block[position] == "{":
                position = _closing(block, position) + 1
            elif position < len(block) and block[position] in "'\"":
                close = block.find(block[position], position + 1)
                if close < 0:
                    raise ValueError("has a quoted option value that is not closed")
                position = close + 1
            else:
                while position < len(block) and not block[position].isspace():
                    position += 1
    return names
