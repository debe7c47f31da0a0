"""Reading the Makefile-style dependency files compilers write (``-MD -MF``, ``--depfile``).

``nvcc -MMD -MF``, ``clang -MMD -MF``, ``glslc -MD -MF`` and ``glslangValidator
--depfile`` all write ``target: dependency ...`` with backslash-continued
lines, ``\\ `` for a space in a path, ``\\#`` for ``#`` and ``$$`` for ``$``.
This module only reads them; the SCons side (iree_kernels.scons.headers)
turns what they name into dependencies.
"""
from __future__ import annotations

import os

from iree_kernels.core.errors import UserError


def dependencies(text: str, where: str) -> list[str]:
    """The files a depfile says its targets depend on, in order, each once.

    ``where``: the depfile's path, for the error on a file that is not one.
    """
    words, word, escaped_any = [], [], False
    text = text.replace("\\\r\n", " ").replace("\\\n", " ")
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in " #\\":
            word.append(text[i + 1])
            i += 2
            escaped_any = True
            continue
        if c == "$" and text[i + 1:i + 2] == "$":
            word.append("$")
            i += 2
            continue
        if c in " \t\n":
            if word or escaped_any:
                words.append("".join(word))
            word, escaped_any = [], False
        else:
            word.append(c)
        i += 1
    if word:
        words.append("".join(word))
    found, targets_done = [], False
    for w in words:
        if not targets_done:
            if w.endswith(":"):
                targets_done = True
            elif ":" in w and not _drive_letter(w):
                targets_done, w = True, w.split(":", 1)[1]
                if w:
                    found.append(w)
            continue
        if w.endswith(":"):          # a second rule (phony targets of -MP): its target is no dependency
            continue
        found.append(w)
    if words and not targets_done:
        raise UserError(f"{where}: not a dependency file (no 'target:' rule)")
    seen: set[str] = set()
    return [os.path.normpath(p) for p in found if not (p in seen or seen.add(p))]


def _drive_letter(word: str) -> bool:
    return len(word) > 2 and word[1] == ":" and word[2] in "\\/"


def canonical(text: str, target: str, where: str) -> str:
    """The depfile ``text`` written again naming ``target``, one dependency a line.

    Compilers name the file they wrote, which the build writes aside under a
    name holding its process id; rewritten, a depfile is the same for the
    same compile, as every other output of the build is.
    """
    def word(path: str) -> str:
        return path.replace("\\", "\\\\").replace(" ", "\\ ").replace("#", "\\#").replace("$", "$$")
    return "".join([f"{word(target)}:", *(f" \\\n  {word(p)}" for p in dependencies(text, where)),
                    "\n"])
