"""Paths and text as SCons command lines and strings must hold them, never expanded by SCons.

Not for quoting flag files (``iree_kernels.core.flag_files``): those are read by
iree-compile, never by SCons.
"""
from __future__ import annotations

import os

import SCons.Subst

from iree_kernels.core import toolchains

def program(path: str):
    """A program's path as one command-line word that SCons never expands.

    Paths come from the filesystem: a checkout in a folder named ``${...}``
    (a legal git branch name, so a CI workspace) puts that text in the path
    of every program inside ``.venv``; SCons would evaluate it as Python. A
    Literal is not expanded, but SCons still removes ``$(``/``$)`` from it, so
    a path holding '$' is named by a word without it (toolchains.command_word),
    which the spawn functions and toolchains turn back into the path.
    """
    return SCons.Subst.Literal(toolchains.command_word(path))


def file_argument(path: str):
    """A file's path as one command-line word: relative to the repo where it lies inside it
    (a checkout's own folder name then never reaches a command line), else as a Literal."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith("..") and "$" not in relative else \
        SCons.Subst.Literal(path)

def escape(text: str) -> str:
    """``text`` for a string SCons substitutes (a *COMSTR, env.subst): every '$' doubled."""
    return text.replace("$", "$$")
