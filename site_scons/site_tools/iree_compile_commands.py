"""SCons tool: ``compile_commands.json``, clangd's compilation database of the kernels.

``env.IreeCompileCommands(target, modules)`` declares ``target`` (the project
writes ``#compile_commands.json`` for ``scons compile_commands.json``) listing
one entry per kernel of the modules that ``env.Kernel`` compiles with a
compiler clangd reads (``KernelCompiler.compile_database``: .cu -> .ptx,
.c -> .o): the argv its builder runs, as its ``$PTXCOM`` or ``$ELFCOM``
expands for that kernel (its flags, include directories and defines, the
depfile flags), with ``directory`` the repository
root and ``file``/``output`` the kernel and what it compiles to, relative to
it. Running an entry's ``arguments`` in ``directory`` compiles the kernel as the
build does (SCons writes the output aside first, then moves it in place).

Unlike SCons's ``compilation_db`` tool, which knows only its C and C++ object
builders and writes a shell-quoted ``command``, the entries hold ``arguments``,
so paths with spaces survive. The argv is taken while the SConscripts are
read, so the file changes exactly when a kernel's command line does.
"""
from __future__ import annotations

import json

import SCons.Action
import SCons.Subst

from iree_kernels.core import toolchains
from iree_kernels.core.files import write_atomically
from iree_kernels.scons.kernels import kernel_builder, kernel_compiler


def entry(kernel, variable: str, top: str) -> dict:
    """The database entry of ``kernel``, built by running ``$variable`` (Ptx: PTXCOM, ...)."""
    executor = kernel.get_executor()
    lines = executor.get_build_env().subst_list(
        f"${variable}", SCons.Subst.SUBST_CMD, target=executor.get_all_targets(),
        source=executor.get_all_sources())
    words = [str(word) for word in lines[0]]
    return {"directory": top, "arguments": [toolchains.real_program(words[0]), *words[1:]],
            "file": kernel.sources[0].get_path(), "output": kernel.get_path()}


SHORT_COMSTR = "COMPDB   $TARGET"      # shown in VERBOSE builds too: the step runs no command


def _write(target, source, env):
    write_atomically(target[0].get_abspath(), source[0].read())


def _compiled(env, modules) -> dict:
    """The kernels of ``modules`` env.Kernel compiles for the database -> their command variable."""
    compiling = kernel_builder(env).builder
    found = {}
    for declared in modules:
        for made in declared.kernels.values():
            kernel = made.kernel
            if not kernel.has_builder() or kernel.builder is not compiling:
                continue            # not compiled here, or a compiler this machine lacks
            compiler = kernel_compiler(env, kernel.sources[0].get_suffix())
            if compiler and compiler.compile_database:
                found[kernel] = compiler.command
    return found


def declare_compile_commands(env, target, modules: list):
    top = env.Dir("#").get_abspath()
    entries = sorted((entry(kernel, variable, top)
                      for kernel, variable in _compiled(env, modules).items()),
                     key=lambda e: (e["file"], e["output"]))
    text = json.dumps(entries, indent=2) + "\n"
    return env.Command(target, env.Value(text), SCons.Action.Action(_write, SHORT_COMSTR))


def generate(env):
    env.AddMethod(declare_compile_commands, "IreeCompileCommands")


def exists(env):
    return True
