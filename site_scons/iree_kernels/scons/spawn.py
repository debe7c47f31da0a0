"""Running the build's commands: without a shell, within their time limits, writing whole files.

``Spawn`` is the SPAWN of every step (no manifest value reaches a shell);
``WholeFileCommand`` the action of a builder whose command line is a
construction variable (``$PTXCOM``, ``$IREE_COMPILECOM``). Not for declaring
anything: the tools do.
"""
from __future__ import annotations

import functools
import os
import re
import sys

import SCons.Action
import SCons.Errors

from iree_kernels.core import processes, toolchains
from iree_kernels.core.files import SCRATCH_PREFIX, scratch_name
from iree_kernels.remote.steps import NotRemote, Outcome
from iree_kernels.scons import remote



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

    The command runs within ``$<timeout_variable>`` seconds: IREE_COMPILE_TIMEOUT
    for ``$IREE_*COM``, KERNEL_COMPILE_TIMEOUT for the kernel compilers.
    """

    timeout_variable = "IREE_COMPILE_TIMEOUT"
    explain = None      # explain(target, source, env, output): see Spawn

    def execute(self, target, source, env, executor=None):
        if executor:
            target, source = executor.get_all_targets(), executor.get_all_sources()
        for node in target:
            _remove_partials(node)
        partial = [_Aside(node, f"{scratch_name()}{node.name}") for node in target]
        variable = self.timeout_variable
        explain = self.explain and functools.partial(self.explain, target, source, env)
        given = env.get("SPAWN")
        spawn = Spawn(timeouts(env).of(variable), variable, explain,
                      getattr(given, "option_origins", None))
        if type(given) is Spawn and given.timeout is None:   # a step's own SPAWN is left as it is
            env = env.Override({"SPAWN": spawn})
            if remote.cluster(env) is not None:
                spawn.remote = functools.partial(_run_remotely, env, target,
                                                 [str(aside) for aside in partial], spawn.timeout)
        status = SCons.Action.CommandAction.execute(self, partial, source, env)
        if status:
            for node in target:
                _remove_partials(node)
            if spawn.failure:
                raise SCons.Errors.BuildError(node=target[0], errstr=spawn.failure,
                                              exitstatus=2)
            return status
        for aside, node in zip(partial, target):
            if os.path.exists(aside.written):
                os.replace(aside.written, node.get_abspath())
            elif not os.path.exists(node.get_abspath()):
                raise SCons.Errors.BuildError(node=node, exitstatus=2,
                                              errstr=f"the command wrote no {node}")
        return status


def _run_remotely(env, target, outputs: list[str], limit, args) -> Outcome | None:
    """``args`` run on a worker of the build's cluster, writing ``outputs``; None: here."""
    cluster = remote.cluster(env)
    try:
        step = remote.step_for(env, args, targets=target, outputs=outputs, limit=limit)
    except NotRemote as e:
        return cluster.stays_here(e)
    outcome = cluster.run(step, env.Dir("#").abspath)
    if outcome is not None:
        print(remote.said_where(outcome, str(target[0])), flush=True)
    return outcome


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


def whole_file_command(variable: str, comstr: str, timeout: str = "",
                       explain=None) -> WholeFileCommand:
    """The action of a builder whose command line is ``$variable``; see WholeFileCommand.

    ``timeout``: the variable holding its time limit; by default
    IREE_COMPILE_TIMEOUT for an ``IREE_*`` command, else KERNEL_COMPILE_TIMEOUT.
    """
    action = WholeFileCommand(variable, {"cmdstr": comstr})
    action.timeout_variable = timeout or ("IREE_COMPILE_TIMEOUT" if variable.startswith("IREE_")
                                          else "KERNEL_COMPILE_TIMEOUT")
    action.explain = explain
    return action


def _remove_partials(node) -> None:
    """Remove what any build's WholeFileCommand wrote for ``node`` and did not move in place."""
    folder = node.dir.get_abspath()
    written = re.compile(rf"{re.escape(SCRATCH_PREFIX)}\d+-{re.escape(node.name)}")
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if written.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass

class Spawn:
    """SCons SPAWN that runs argv directly, within a time limit: no manifest value reaches a shell.

    ``timeout``: seconds (None: no limit), named in the error by ``variable``.
    ``option_origins``: flag file of a model's options -> {option name: where
    the manifest sets it}, so that an option iree-compile rejects (a value it
    does not take) is reported at its manifest line; the project tool fills it.
    A failing tool's first error line is printed before its whole output, so
    the file and line come first however long the output is. A tool that
    prints ``error:`` fails whatever its exit status (iree-compile has exited
    0 after printing errors). After a call, ``failure`` holds the one-line
    reason (a time limit, a crash, an error printed with status 0), or ''.
    """

    def __init__(self, timeout: float | None = None, variable: str = "", explain=None,
                 option_origins: dict[str, dict[str, str]] | None = None) -> None:
        self.timeout, self.variable, self.failure = timeout, variable, ""
        self.option_origins = {} if option_origins is None else option_origins
        # explain(output) -> one line saying why the tool failed (having kept its
        # output in a file), or '' to print the output as it is.
        self.explain = explain
        # remote(args) -> the Outcome of args run on a worker, or None to run them here
        self.remote = None

    def __call__(self, sh, escape, cmd, args, env):
        args = [toolchains.real_program(args[0]), *args[1:]]
        name = os.path.basename(args[0])
        try:
            result = self._run(args, env)
        except OSError as e:
            print(f"scons: *** cannot run {args[0]}: {e.strerror}")
            return 127
        except processes.TimeLimit as e:
            self.failure = toolchains.timeout_message(name, self.timeout, self.variable)
            sys.stdout.write(e.output)
            return 124
        status, output = result.returncode, result.stdout
        if status < 0:
            self.failure = toolchains.crash_message(name, -status, args)
        elif status == 0 and toolchains.printed_error(output):
            self.failure = (f"{name} exited 0 but printed an error: "
                            f"{toolchains.printed_error(output)}")
            status = 1
        elif status != 0 and self.explain and not self._option_origin(args, output) and \
                (explained := self.explain(output)):
            self.failure = explained
            return status
        elif status != 0:
            lines = [line for line in output.splitlines() if line.strip()]
            first = next((line for line in lines if _ERROR_RE.search(line)), None) or \
                next(iter(lines), None)
            where = self._option_origin(args, output)
            if first:
                print(f"scons: *** {where}{name}: {first.strip()}")
                head, _, rest = output.lstrip("\n").partition("\n")
                if head.strip() == first.strip():
                    output = rest               # said on the line above: not twice
        sys.stdout.write(output)
        sys.stdout.flush()
        return status

    def _run(self, args, env) -> processes.Finished:
        outcome = self.remote(args) if self.remote else None
        if outcome is None:
            return processes.run(args, limit=self.timeout, env=env, stderr=processes.STDOUT,
                                 keep=KEPT_OUTPUT)
        if outcome.timed_out:
            raise processes.TimeLimit(self.timeout, outcome.output)
        return processes.Finished(outcome.returncode, outcome.output, "")

    def _option_origin(self, args, output: str) -> str:
        return option_origin(self.option_origins, args, output)


def option_origin(origins: dict[str, dict[str, str]], args, output: str) -> str:
    """Where the manifest sets the option iree-compile's error (``output``) is about, as
    ``file:line: ``, from the flag files ``args`` name (``@file``) and ``origins`` (Spawn's
    ``option_origins``); '' where it is about no option the manifest sets."""
    m = _OPTION_ERROR_RE.search(output)
    if not m:
        return ""
    for arg in args:
        where = origins.get(arg[1:], {}).get(m.group(1)) if arg.startswith("@") else None
        if where:
            return f"{where}: "
    return ""


_OPTION_ERROR_RE = re.compile(r"for the -+([\w.-]+) option")

_ERROR_RE = re.compile(r"\berror\b|\bERROR\b|fatal", re.IGNORECASE)
KEPT_OUTPUT = 4 << 20       # bytes of a step's output shown: its first 4 MiB and last 1 MiB


class PSpawn:
    """SCons PSPAWN (output to given files) without a shell, like Spawn, each program
    within the limit ``timeouts`` sets for its kind."""

    def __init__(self, timeouts: toolchains.Timeouts) -> None:
        self.timeouts = timeouts

    def __call__(self, sh, escape, cmd, args, env, stdout, stderr):
        args = [toolchains.real_program(args[0]), *args[1:]]
        limit = self.timeouts.for_program(args[0])
        try:
            return processes.run(args, limit=limit, env=env, stdout=stdout, stderr=stderr,
                                 text=False).returncode
        except processes.TimeLimit:
            name = os.path.basename(args[0])
            stderr.write(f"scons: *** {toolchains.timeout_message(name, limit)}\n")
            return 124
        except OSError as e:
            stderr.write(f"scons: cannot run {args[0]}: {e.strerror}\n")
            return 127


def timeouts(env) -> toolchains.Timeouts:
    """The time limits ``env``'s variables set (IREE_COMPILE_TIMEOUT, ...; the defaults for
    those it lacks): what a tool's step passes to the library that runs a tool. Read once
    for each set of values, however many steps ask."""
    return _timeouts(tuple(env.get(name) for name in toolchains.TIMEOUT_VARIABLES))


@functools.lru_cache(maxsize=None)
def _timeouts(values: tuple) -> toolchains.Timeouts:
    return toolchains.Timeouts.from_values(dict(zip(toolchains.TIMEOUT_VARIABLES, values)))
