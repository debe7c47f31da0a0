"""``env.Kernel``: one builder for every kernel language, the action picked by source suffix.

As SCons's swig tool adds ``.i`` to the C file builder (``add_action``),
each kernel language's tool (``ptx``, ``glsl``, ``elf_object``, ``hsaco``)
adds its source suffix to this builder, with its action, emitters and
scanners, and says which program compiles it (``KernelCompiler``). What a
suffix compiles to, which targets it fits and how the result is checked are
``iree_kernels.kinds.registry.KERNEL_KINDS``. A new kernel language is one entry
there and one tool that calls ``add_kernel_compiler``.

Each tool's builder also depends on the version of the program its command
runs (``version_emitter``): a new compiler rebuilds what it made, and the
release's lock record names the versions found among a module's dependencies.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Callable

import SCons.Builder
import SCons.Node.Python
import SCons.Scanner
import SCons.Subst

from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.scons.nodes import named_value
from iree_kernels.scons.spawn import timeouts


@dataclass(frozen=True)
class KernelCompiler:
    """How the build compiles kernels of one source suffix."""
    suffix: str                                  # the source's: .cu
    command: str                                 # its command-line variable: PTXCOM
    # (name, path or None) of the program this environment would run: a missing one is
    # reported, naming how to install it, before anything is built.
    program: Callable[[object], tuple[str, str | None]]
    arch_variable: str = ""                      # set to the module's architecture: CUDA_ARCH
    compile_database: bool = False               # listed in compile_commands.json
    include_variable: str = ""                   # its include path: ELF_CPPPATH (a family's
                                                 # instance finds its iree_gemm.h there)


def kernel_builder(env):
    """The environment's ``Kernel`` builder, made on first use."""
    builder = env["BUILDERS"].get("Kernel")
    if builder is None:
        builder = SCons.Builder.Builder(action={}, emitter={}, suffix={},
                                        source_scanner=SCons.Scanner.Selector({}),
                                        target_scanner=SCons.Scanner.Selector({}))
        builder.compilers = {}
        env["BUILDERS"]["Kernel"] = builder
    return builder


def add_kernel_compiler(env, compiler: KernelCompiler, action, emitters: list, suffix: str,
                        source_scanner=None, target_scanner=None) -> None:
    """Make ``env.Kernel`` compile ``compiler.suffix`` sources to ``suffix`` with ``action``."""
    builder = kernel_builder(env)
    builder.add_action(compiler.suffix, action)
    builder.builder.emitter[compiler.suffix] = SCons.Builder.ListEmitter(emitters)
    builder.builder.suffix[compiler.suffix] = suffix
    if source_scanner:
        builder.builder.source_scanner.add_scanner(compiler.suffix, source_scanner)
    if target_scanner:
        builder.builder.target_scanner.add_scanner(suffix, target_scanner)
    builder.compilers[compiler.suffix] = compiler


def kernel_compiler(env, suffix: str) -> KernelCompiler | None:
    """The compiler of ``suffix`` sources a tool added to ``env.Kernel``, or None."""
    builder = env["BUILDERS"].get("Kernel")
    return builder.compilers.get(suffix) if builder is not None else None


class ToolVersion:
    """A program's version, asked only when a signature or the lock record needs it.

    ``makes``: whether the program makes what depends on it (a compiler), which
    the release's lock record names, or only checks it (ptxas, spirv-val).
    ``timeouts``: the build's (VERSION_TIMEOUT); the settings' defaults if None.
    """

    def __init__(self, program: str, makes: bool = True,
                 timeouts: toolchains.Timeouts | None = None) -> None:
        self.program, self.makes, self.timeouts = program, makes, timeouts

    @property
    def name(self) -> str:
        return os.path.basename(self.program)

    def __str__(self) -> str:
        try:
            return toolchains.version(self.program, timeouts=self.timeouts)
        except UserError as e:
            # A --version that hangs. SCons asks while deciding what to build, where an
            # exception is printed with a traceback and asks again; no version must
            # key anything: one line, and stop.
            sys.stdout.flush()
            sys.stderr.write(f"scons: *** {e}\n")
            sys.stderr.flush()
            os._exit(2)


def tool_version(program: str, makes: bool = True,
                 timeouts: toolchains.Timeouts | None = None):
    """The Value node of ``program``'s version (one per program and run: named_value finds
    it again by its name); see ToolVersion."""
    name = f"{program} --version" + ("" if makes else " (checker)")
    return named_value(ToolVersion(program, makes, timeouts), name)


def versions_reached(node) -> dict[str, object]:
    """The versions of the programs that made ``node`` and its dependencies, by program name."""
    found, seen, pending = {}, set(), [node]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        if isinstance(current, SCons.Node.Python.Value) and \
                isinstance(current.read(), ToolVersion):
            if current.read().makes:
                found[current.read().name] = current
            continue
        pending.extend(current.sources)
        pending.extend(current.depends)
    return found


def command_program(env, command: str, target, source) -> str | None:
    """The program ``$command`` runs for ``target`` (a path), or None."""
    argv = env.subst_list(f"${command}", SCons.Subst.SUBST_CMD, target=target, source=source)
    if not argv or not argv[0]:
        return None
    program = toolchains.real_program(str(argv[0][0]))
    # WhereIs expands its argument: a path is taken as it is.
    return program if os.path.isabs(program) else env.WhereIs(program) or program


def version_emitter(command: str):
    """An emitter making the targets depend on the version of the program ``$command`` runs."""
    def emitter(target, source, env):
        program = command_program(env, command, target, source)
        if program:
            env.Depends(target, tool_version(program, timeouts=timeouts(env)))
        return target, source
    return emitter
