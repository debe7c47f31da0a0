"""SCons glue shared by the tools in ``site_tools``: error reporting, atomic writes, spawning.

Kept out of ``iree_kernels`` so that package imports without SCons.
"""
from __future__ import annotations

import functools
import os
import re
import subprocess
import sys

import SCons.Action
import SCons.Errors
import SCons.Script
import SCons.Scanner
import SCons.Subst

from iree_kernels.errors import UserError
from iree_kernels.files import write_atomically  # noqa: F401 (the tools' writer)


def fail(message: str) -> None:
    """Stop while reading the SConscripts: one error line, exit status 2."""
    print(f"scons: *** {message}")
    SCons.Script.Exit(2)


def shared_cache(env) -> tuple[str | None, bool]:
    """The folder CACHE_DIR names (None: no shared cache), and whether this build only reads it."""
    folder = env.get("CACHE_DIR", "")
    if not folder or SCons.Script.GetOption("cache_disable"):
        return None, False
    path = os.path.join(SCons.Script.GetLaunchDir(), os.path.expanduser(folder))
    return path, bool(env["CACHE_READONLY"] or SCons.Script.GetOption("cache_readonly"))


def program(path: str):
    """A program's path as one command-line word, even where it holds a space."""
    return SCons.Subst.Literal(path) if any(c.isspace() for c in path) else path


PARTIAL_PREFIX = ".tmp-"          # as iree_kernels.files names what it writes aside


class WholeFileCommand(SCons.Action.LazyAction):
    """``$XCOM`` run with each target written beside it (``.tmp-<pid>-<name>``), then moved in place.

    A tool killed mid-write, or left running by a scons killed with SIGKILL,
    then never leaves a partial file where SCons's records from an earlier
    build would call the target up to date; the pid keeps such a tool off the
    file of the build that follows, which removes what earlier builds left.
    The printed command names the targets themselves. Only ``$TARGET`` and
    ``$TARGETS`` name the files aside: a command using ``${TARGET.abspath}``
    writes the target itself, and files a tool names after its output (a
    ``-MD`` depfile) keep the name aside. Where ``$XCOM`` is not a one-line
    string (a function, a list), SCons runs it as given, never reaching here.
    """

    def execute(self, target, source, env, executor=None):
        if executor:
            target, source = executor.get_all_targets(), executor.get_all_sources()
        for node in target:
            _remove_partials(node)
        partial = [_Aside(node, f"{PARTIAL_PREFIX}{os.getpid()}-{node.name}") for node in target]
        status = SCons.Action.CommandAction.execute(self, partial, source, env)
        if status:
            for node in target:
                _remove_partials(node)
            return status
        for aside, node in zip(partial, target):
            if os.path.exists(aside.written):
                os.replace(aside.written, node.get_abspath())
            elif not os.path.exists(node.get_abspath()):
                raise SCons.Errors.BuildError(node=node, exitstatus=2,
                                              errstr=f"the command wrote no {node}")
        return status


class _Aside:
    """A target as a command line names it: the path beside it; the target's own node otherwise.

    Not a node of SCons's graph, which worker threads must not extend.
    """

    def __init__(self, node, name: str) -> None:
        self._node, self._path = node, os.path.join(os.path.dirname(str(node)), name)
        self.written = os.path.join(node.dir.get_abspath(), name)

    def __str__(self) -> str:
        return self._path

    def get_subst_proxy(self):
        return self

    def __getattr__(self, attribute):
        return getattr(self._node, attribute)


def whole_file_command(variable: str, comstr: str) -> WholeFileCommand:
    """The action of a builder whose command line is ``$variable``; see WholeFileCommand."""
    return WholeFileCommand(variable, {"cmdstr": comstr})


def _remove_partials(node) -> None:
    """Remove what any build's WholeFileCommand wrote for ``node`` and did not move in place."""
    folder = node.dir.get_abspath()
    written = re.compile(rf"{re.escape(PARTIAL_PREFIX)}\d+-{re.escape(node.name)}")
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if written.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass


_INCLUDE_RE = r'^[ \t]*#[ \t]*include[ \t]*(<|")([^>"]+)(>|")'


def include_scanner(name: str, suffixes: list[str], path_variable: str):
    """A scanner of C-style #include lines, searching beside the file, then $path_variable."""
    return SCons.Scanner.ClassicCPP(name, suffixes, path_variable, _INCLUDE_RE)


def reporting_user_errors(action_function):
    """Turn a UserError raised by a Python action into one SCons error line, no traceback."""
    @functools.wraps(action_function)
    def wrapper(target, source, env):
        try:
            return action_function(target, source, env)
        except UserError as e:
            for node in target:
                path = getattr(node, "abspath", None)
                if path and os.path.isfile(path):
                    os.remove(path)
            raise SCons.Errors.BuildError(node=target[0], errstr=str(e), exitstatus=2) from None
    return wrapper


def spawn_without_shell(sh, escape, cmd, args, env):
    """SCons SPAWN that runs argv directly: no manifest value ever reaches a shell.

    A failing tool's first error line is printed before its whole output, so the
    file and line come first however long the output is.
    """
    try:
        result = subprocess.run(args, env=env, close_fds=True, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
    except OSError as e:
        print(f"scons: *** cannot run {args[0]}: {e.strerror}")
        return 127
    if result.returncode != 0:
        first = next((line for line in result.stdout.splitlines()
                      if _ERROR_RE.search(line)), None)
        if first:
            print(f"scons: *** {os.path.basename(args[0])}: {first.strip()}")
    sys.stdout.write(result.stdout)
    sys.stdout.flush()
    return result.returncode


_ERROR_RE = re.compile(r"\berror\b|\bERROR\b|fatal", re.IGNORECASE)


def pspawn_without_shell(sh, escape, cmd, args, env, stdout, stderr):
    """SCons PSPAWN (output to given files) without a shell, like spawn_without_shell."""
    try:
        return subprocess.call(args, env=env, close_fds=True, stdout=stdout, stderr=stderr)
    except OSError as e:
        stderr.write(f"scons: cannot run {args[0]}: {e.strerror}\n")
        return 127
