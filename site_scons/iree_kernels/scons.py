"""SCons glue shared by the tools in ``site_tools``: error reporting, atomic writes, spawning.

The one module of ``iree_kernels`` that imports SCons, and only the tools
import it: the rest of the package imports without SCons.
"""
from __future__ import annotations

import errno
import fcntl
import functools
import json
import os
import re
import stat
import subprocess
import sys
import time
import unicodedata

import SCons.Action
import SCons.Errors
import SCons.Node.Python
import SCons.Script
import SCons.Scanner
import SCons.Subst

import iree_kernels
from iree_kernels import settings, toolchains
from iree_kernels.errors import UserError
from iree_kernels.files import kind_of, not_regular, write_atomically  # noqa: F401 (the tools' writer)


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
    if "$" in path:
        fail(f"CACHE_DIR: the cache's path {path} contains '$', which SCons would expand; "
             "use a folder whose path has none")
    return path, only_reads(env)


def only_reads(env, variable: str = "CACHE_READONLY") -> bool:
    """Whether this build only reads a cache: ``variable`` (CACHE_READONLY,
    REMOTE_CACHE_READONLY) or SCons's --cache-readonly says so."""
    return bool(env[variable] or SCons.Script.GetOption("cache_readonly"))


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


def spec_value(env, data):
    """A Value node passing ``data`` (JSON) to a Python action, which reads it with ``read_spec``.

    The package's fingerprint is part of the node, not of ``data``: a new
    version of this package runs the action again, and no action sees or
    drops it.
    """
    return env.Value(json.dumps({"spec": data, "library": iree_kernels.fingerprint()},
                                sort_keys=True))


def read_spec(node):
    """What ``spec_value`` passed."""
    return json.loads(node.read())["spec"]


def escape(text: str) -> str:
    """``text`` for a string SCons substitutes (a *COMSTR, env.subst): every '$' doubled."""
    return text.replace("$", "$$")


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
        partial = [_Aside(node, f"{PARTIAL_PREFIX}{os.getpid()}-{node.name}") for node in target]
        variable = self.timeout_variable
        explain = self.explain and functools.partial(self.explain, target, source, env)
        spawn = Spawn(toolchains.seconds(env.get(variable)), variable, explain)
        if env.get("SPAWN") is spawn_without_shell:     # a step's own SPAWN is left as it is
            env = env.Override({"SPAWN": spawn})
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
    written = re.compile(rf"{re.escape(PARTIAL_PREFIX)}\d+-{re.escape(node.name)}")
    for name in os.listdir(folder) if os.path.isdir(folder) else ():
        if written.fullmatch(name):
            try:
                os.remove(os.path.join(folder, name))
            except FileNotFoundError:
                pass


_INCLUDE_RE = r'^[ \t]*#[ \t]*include[ \t]*(<|")([^>"]+)(>|")'


class _IncludeScanner(SCons.Scanner.ClassicCPP):
    """ClassicCPP reading regular files only: a FIFO named like a header would block the build."""

    def find_include_names(self, node):
        why = not_regular(node.abspath)
        if why and why != "not found":
            raise SCons.Errors.UserError(f"{node}: an included file is {why}, not a regular file")
        return super().find_include_names(node)


def package_include(env, scan_variable: str, path_variable: str) -> None:
    """Put the package's include folder (``iree_kernels/grid.cuh``, ``.glsl``) after ``$path_variable``.

    On the command line as ``$IREE_KERNELS_INCFLAG``, inside ``$( $)``: where
    the package is installed is not part of any signature (a shared cache hits
    across checkouts and virtual environments); the headers' content is,
    through the scanner searching ``$scan_variable``.
    """
    folder = iree_kernels.include_path()
    relative = os.path.relpath(folder)
    word = relative if not relative.startswith("..") else folder
    env.SetDefault(IREE_KERNELS_INCFLAG=SCons.Subst.Literal("-I" + word))
    # A node, not a string: the folder's path is never substituted.
    env.SetDefault(**{scan_variable: [f"${path_variable}", env.fs.Dir(folder)]})


def include_scanner(name: str, suffixes: list[str], path_variable: str):
    """A scanner of C-style #include lines, searching beside the file, then $path_variable."""
    return _IncludeScanner(name, suffixes, path_variable, _INCLUDE_RE)


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


class Spawn:
    """SCons SPAWN that runs argv directly, within a time limit: no manifest value reaches a shell.

    ``timeout``: seconds (None: no limit), named in the error by ``variable``.
    A failing tool's first error line is printed before its whole output, so
    the file and line come first however long the output is. A tool that
    prints ``error:`` fails whatever its exit status (iree-compile has exited
    0 after printing errors). After a call, ``failure`` holds the one-line
    reason (a time limit, a crash, an error printed with status 0), or ''.
    """

    def __init__(self, timeout: float | None = None, variable: str = "", explain=None) -> None:
        self.timeout, self.variable, self.failure = timeout, variable, ""
        # explain(output) -> one line saying why the tool failed (having kept its
        # output in a file), or '' to print the output as it is.
        self.explain = explain

    def __call__(self, sh, escape, cmd, args, env):
        args = [toolchains.real_program(args[0]), *args[1:]]
        name = os.path.basename(args[0])
        try:
            result = subprocess.run(args, env=env, close_fds=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace",
                                    timeout=self.timeout)
        except OSError as e:
            print(f"scons: *** cannot run {args[0]}: {e.strerror}")
            return 127
        except subprocess.TimeoutExpired as e:
            self.failure = toolchains.timeout_message(name, self.timeout, self.variable)
            output = e.output.decode(errors="replace") if isinstance(e.output, bytes) else e.output
            sys.stdout.write(output or "")
            return 124
        status, output = result.returncode, result.stdout
        if status < 0:
            self.failure = toolchains.crash_message(name, -status, args)
        elif status == 0 and toolchains.printed_error(output):
            self.failure = (f"{name} exited 0 but printed an error: "
                            f"{toolchains.printed_error(output)}")
            status = 1
        elif status != 0 and self.explain and (explained := self.explain(output)):
            self.failure = explained
            return status
        elif status != 0:
            lines = [line for line in output.splitlines() if line.strip()]
            first = next((line for line in lines if _ERROR_RE.search(line)), None) or \
                next(iter(lines), None)
            where = _option_origin(args, output)
            if first:
                print(f"scons: *** {where}{name}: {first.strip()}")
        sys.stdout.write(output)
        sys.stdout.flush()
        return status


# Flag files of models' options -> {option name: where the manifest sets it}: an option
# iree-compile rejects (a value it does not take) is reported at its manifest line.
OPTION_ORIGINS: dict[str, dict[str, str]] = {}
_OPTION_ERROR_RE = re.compile(r"for the -+([\w.-]+) option")


def _option_origin(args, output: str) -> str:
    m = _OPTION_ERROR_RE.search(output)
    if not m:
        return ""
    for arg in args:
        where = OPTION_ORIGINS.get(arg[1:], {}).get(m.group(1)) if arg.startswith("@") else None
        if where:
            return f"{where}: "
    return ""


spawn_without_shell = Spawn()       # the default SPAWN: no time limit (a step's own sets one)
_ERROR_RE = re.compile(r"\berror\b|\bERROR\b|fatal", re.IGNORECASE)


def pspawn_without_shell(sh, escape, cmd, args, env, stdout, stderr):
    """SCons PSPAWN (output to given files) without a shell, like spawn_without_shell."""
    args = [toolchains.real_program(args[0]), *args[1:]]
    try:
        return subprocess.call(args, env=env, close_fds=True, stdout=stdout, stderr=stderr,
                               timeout=toolchains.timeout_for(args[0]))
    except subprocess.TimeoutExpired:
        stderr.write(f"scons: *** {toolchains.timeout_message(os.path.basename(args[0]), toolchains.timeout_for(args[0]))}\n")
        return 124
    except OSError as e:
        stderr.write(f"scons: cannot run {args[0]}: {e.strerror}\n")
        return 127


def safe_arguments(variables, arguments: dict) -> dict:
    """The command line's ``NAME=value`` pairs as SCons may substitute them.

    SCons substitutes variables' values (converters, validators, ``scons -h``)
    and evaluates ``${...}`` in them as Python. Control characters are refused
    everywhere; '$' is refused in every value but free text, where it is
    escaped (``$$``): ``settings.Setting.dollar``. Defaults are checked too: one
    comes from the environment (IREE_KERNELS_CACHE_DIR).
    """
    safe = {}
    for option in variables.options:
        given = option.key in arguments
        value = arguments.get(option.key, option.default)
        if not isinstance(value, str):
            continue
        shown = settings.BY_NAME[option.key].shown(value)
        where = f"{option.key}={shown!r}" if given else \
            f"{option.key} (default {shown!r}, from the environment)"
        bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
        if bad:
            fail(f"{where}: contains the control character {bad!r}")
        dollar = settings.BY_NAME[option.key].dollar
        if "$" in value and dollar != "escaped":
            kind = "a path" if dollar == "refused in a path" else "a value"
            fail(f"{where}: '$' is not allowed in {kind} here (SCons would expand it)")
        if given:
            safe[option.key] = escape(value)
    return safe


_held_locks: list[int] = []


def lock_build_folder(folder: str, wait: float) -> None:
    """Hold ``folder``/.scons-lock for this process's life; wait up to ``wait`` s for another scons.

    Two builds in one checkout would write the same files and SCons's records.
    """
    path = os.path.join(folder, ".scons-lock")
    try:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
                     | os.O_NONBLOCK, 0o666)
    except OSError as e:
        if e.errno == errno.ELOOP:
            fail(f"{path} is a symbolic link; the build never writes through one: remove it")
        fail(f"BUILD_DIR: cannot create {path}: {e.strerror}")
    kind = os.fstat(fd).st_mode
    if not stat.S_ISREG(kind):
        os.close(fd)
        fail(f"{path} is {kind_of(kind)}, not a regular file: remove it")
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            break
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(fd)
                fail(f"another scons is building in this checkout (it holds {path}); waited "
                     f"{wait:g} s (LOCK_WAIT); run again when it has finished")
            time.sleep(0.1)
    _held_locks.append(fd)


class _RecordedByName(SCons.Node.Python.Value):
    """A Value that SCons's records (.sconsign) name by its name, not by its content."""

    def __str__(self) -> str:
        return self.name


def named_value(value, name: str):
    """A Value node for ``value`` (asked for its text only when a signature needs it), named ``name``.

    SCons records a Value dependency by ``str(node)`` and ``--debug=explain``
    turns that string back into a node through ``ValueWithMemo``: a Value
    whose ``str()`` is its content (a tool's version) came back as another
    node, and every rebuild was explained with that dependency removed and
    added. Recorded by name and found again under it, it compares equal.
    """
    key = hash((name, None))
    node = SCons.Node.Python._memo_lookup_map.get(key)
    if node is None:
        node = SCons.Node.Python._memo_lookup_map[key] = _RecordedByName(value, name=name)
    return node
