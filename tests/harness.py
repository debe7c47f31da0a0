"""Running scons (or any tool) in a project folder, and reading the steps a build printed.

Tests and benches share it: ``scons(root, *args)`` runs a build with a timeout
and returns a ``Run``; ``Run.steps`` lists the (step, path) of every short
progress line (``IREE     build/llvm-cpu/mlp.vmfb``), ``Run.ran(step)`` the paths
of one step. The lines' shapes are read from the tools' ``SHORT_COMSTRS`` /
``SHORT_COMSTR`` (site_scons/site_tools) and the kernel kinds' ``short_lines``
(site_scons/iree_kernels/kinds), so a renamed step changes one place.
"""
from __future__ import annotations

import ast
import collections
import functools
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SITE_DIR = REPO / "site_scons"
SCONS = Path(sys.executable).with_name("scons")
# Where the scons runs of the tests keep the library's bytecode: outside every checkout and
# test folder, shared by the run's workers (without it each run compiles the library: 0.08 s).
PYCACHE = Path(tempfile.gettempdir()) / f"iree-kernels-tests-pycache-{os.getuid()}"
# What a scons run's environment changes: no bytecode written into checkouts.
SCONS_ENVIRONMENT = {"PYTHONDONTWRITEBYTECODE": None, "PYTHONPYCACHEPREFIX": PYCACHE}
# The fork server (tests/scons_forks.py) scons() starts the runs it can from: the test suite
# starts one per process (conftest); None (benches): every run starts scons.
FORKS = None
TIMEOUT = 1800              # seconds: the longest e2e build (the ONNX demo) takes a few minutes
COMSTR_NAMES = ("SHORT_COMSTRS", "SHORT_COMSTR")
# $TARGET / $SOURCE is the path a line names; any other variable is one word ($IREE_RUN_DEVICE).
PATH_VARIABLES = ("$TARGET", "$SOURCE")


def short_comstrs(tools: Path = SITE_DIR / "site_tools",
                  kinds: Path | None = SITE_DIR / "iree_kernels" / "kinds") -> list[str]:
    """Every short progress line template the tools in ``tools`` and the kernel kinds in
    ``kinds`` (their ``short_lines``) declare, read without SCons."""
    templates = []
    for kind in sorted(kinds.glob("*.py")) if kinds else ():
        for node in ast.walk(ast.parse(kind.read_text(), str(kind))):
            if isinstance(node, ast.keyword) and node.arg == "short_lines":
                templates += [line for _, line in ast.literal_eval(node.value)]
    for tool in sorted(tools.glob("*.py")):
        for node in ast.parse(tool.read_text(), str(tool)).body:
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in COMSTR_NAMES for t in node.targets):
                value = ast.literal_eval(node.value)
                templates += value.values() if isinstance(value, dict) else [value]
    return templates


def step_pattern(template: str) -> re.Pattern:
    """The lines ``template`` prints, with groups step (its first word) and path."""
    step = template.split(None, 1)[0]
    regex = ""
    for part in re.split(r"(\$\w+)", template[len(step):]):
        if part in PATH_VARIABLES and "(?P<path>" not in regex:
            regex += r"(?P<path>\S.*?)"
        elif part.startswith("$"):
            regex += r"\S+"
        else:
            regex += re.escape(part)
    return re.compile(f"^(?P<step>{re.escape(step)}){regex}$")


@functools.cache
def step_patterns() -> tuple[re.Pattern, ...]:
    return tuple(step_pattern(t) for t in dict.fromkeys(short_comstrs()))


@functools.cache
def step_words() -> frozenset[str]:
    """Every step word a short progress line may start with."""
    return frozenset(t.split(None, 1)[0] for t in short_comstrs())


class Step(collections.namedtuple("Step", "step path")):
    """One short progress line: its step word and the path it names."""


def parse_steps(text: str) -> list[Step]:
    """The steps of every short progress line in ``text``, in order."""
    steps = []
    for line in text.splitlines():
        for pattern in step_patterns():
            if m := pattern.match(line):
                steps.append(Step(m["step"], m["path"]))
                break
    return steps


@dataclass
class Run:
    argv: list[str]
    cwd: Path
    returncode: int
    stdout: str
    stderr: str
    seconds: float

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def steps(self) -> list[Step]:
        """(step, path) of every build step SCons ran, from its short progress lines."""
        return parse_steps(self.stdout)

    def ran(self, step: str) -> list[str]:
        """The paths of every ``step`` line, sorted."""
        if step not in step_words():
            raise ValueError(f"{step!r} is no step the tools print: {sorted(step_words())}")
        return sorted(path for s, path in self.steps if s == step)

    def made_modules(self) -> list[str]:
        """The modules this run made, compiled (IREE) or relinked (RELINK), sorted; not the
        unlinked modules RELINK starts from."""
        return sorted(path for s, path in self.steps
                      if s in ("IREE", "RELINK") and "/unlinked/" not in path)

    def step_counts(self) -> collections.Counter:
        return collections.Counter(s for s, _ in self.steps)

    def failure(self, tail: int | None = None) -> str:
        """Its command, folder, status and output (the last ``tail`` characters of each stream)."""
        start = -tail if tail else 0
        out, err = self.stdout[start:], self.stderr[start:]
        return f"{' '.join(self.argv)} failed in {self.cwd} (exit {self.returncode}):\n{out}{err}"


class Timeout(AssertionError):
    """A run killed at its time limit; ``run`` holds what it printed until then."""

    def __init__(self, run: Run, timeout: float) -> None:
        super().__init__(f"{' '.join(run.argv)} ran past {timeout} s in {run.cwd}; killed:\n"
                         f"{run.output}")
        self.run = run


def environment_with(env: dict | None) -> dict[str, str]:
    """os.environ with ``env``'s changes (None removes a name)."""
    environment = dict(os.environ)
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = str(value)
    return environment


def run(argv, cwd: Path, *, env: dict | None = None, timeout: float = TIMEOUT,
        forks=None) -> Run:
    """``argv`` run in ``cwd``, output captured; ``env``: changes to os.environ (None removes).

    Past ``timeout`` seconds the command and everything it started are killed
    and Timeout raised. ``forks``: the scons fork server to start it from, where it can.
    """
    argv = [str(a) for a in argv]
    environment = environment_with(env)
    start = time.perf_counter()
    if forks and forks.usable(argv, environment):
        return _run_forked(forks, argv, Path(cwd), environment, timeout, start)
    process = subprocess.Popen(argv, cwd=cwd, env=environment, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        raise Timeout(Run(argv, Path(cwd), -9, stdout, stderr, time.perf_counter() - start),
                      timeout) from None
    except BaseException:           # KeyboardInterrupt: its own session would not get it
        _kill_group(process)
        raise
    return Run(argv, Path(cwd), process.returncode, stdout, stderr, time.perf_counter() - start)


def _run_forked(forks, argv: list[str], cwd: Path, environment: dict, timeout: float,
                start: float) -> Run:
    started = forks.start(argv, cwd, environment)
    try:
        if not started.communicate(time.monotonic() + timeout):
            started.kill()
            started.communicate(None)
            started.wait()
            raise Timeout(Run(argv, cwd, -9, *started.output(), time.perf_counter() - start),
                          timeout)
        returncode = started.wait()
    except BaseException:               # KeyboardInterrupt: its own session would not get it
        started.kill()
        raise
    finally:
        started.close()
    return Run(argv, cwd, returncode, *started.output(), time.perf_counter() - start)


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def scons_argv(*args: str, site_dir: Path | None = SITE_DIR, program=(SCONS,)) -> list[str]:
    """The command line of a quiet (-Q) scons run; ``site_dir`` None: the project's own."""
    return [*map(str, program), *([f"--site-dir={site_dir}"] if site_dir else []), "-Q", *args]


def scons(root: Path, *args: str, site_dir: Path | None = SITE_DIR, program=(SCONS,),
          env: dict | None = None, timeout: float = TIMEOUT, fresh: bool = False) -> Run:
    """scons -Q ``args`` in ``root`` with this repo's site_scons (see run for env, timeout).

    ``program``: the argv that runs SCons (another venv's scons, or python -c ...).
    ``fresh``: a new process even where FORKS could fork it, with a hash seed of its own
    (a forked run has its server's), for a test that two builds come out the same.
    """
    return run(scons_argv(*args, site_dir=site_dir, program=program), root,
               env={**SCONS_ENVIRONMENT, **(env or {})}, timeout=timeout,
               forks=None if fresh else FORKS)


class LoopbackCluster:
    """A Dask scheduler and workers on this machine, each a process of its own sharing nothing
    but the network (``python -m iree_kernels scheduler|worker``), for builds with
    DASK_SCHEDULER=``address``. ``workers``: name -> extra worker arguments; each worker's
    scratch folder is ``folder/<name>``. Used as a context manager; ``kill(name)`` ends a
    worker with SIGKILL."""

    def __init__(self, folder: Path, workers: dict[str, list[str]], start_timeout: float = 60):
        self.folder, self.names = folder, list(workers)
        self.folder.mkdir(parents=True, exist_ok=True)
        path = os.pathsep.join(p for p in (str(SITE_DIR), os.environ.get("PYTHONPATH")) if p)
        environ = {**os.environ, "PYTHONPATH": path, "PYTHONPYCACHEPREFIX": str(PYCACHE)}
        python = [sys.executable, "-m", "iree_kernels"]
        self.processes = {}
        log = open(folder / "scheduler.log", "w")
        self.processes["scheduler"] = subprocess.Popen(
            [*python, "scheduler", "--port", "0"], stdout=subprocess.PIPE, stderr=log, text=True,
            env=environ, start_new_session=True)
        line = self.processes["scheduler"].stdout.readline()
        if not line.startswith("scheduler at "):
            self.close()
            raise RuntimeError(f"the scheduler did not start: {line!r}, "
                               f"{(folder / 'scheduler.log').read_text()[-2000:]}")
        self.address = line.split()[-1]
        for name, extra in workers.items():
            out = open(folder / f"{name}.log", "w")
            self.processes[name] = subprocess.Popen(
                [*python, "worker", self.address, "--name", name, "--scratch",
                 str(self.scratch(name)), *extra],
                stdout=out, stderr=subprocess.STDOUT, env=environ, start_new_session=True)
        deadline = time.monotonic() + start_timeout
        while not all(f"worker {n} at" in self.log(n) for n in workers):
            if time.monotonic() > deadline:
                self.close()
                raise RuntimeError("workers did not start: " + " | ".join(
                    self.log(n)[-1000:] for n in workers))
            time.sleep(0.1)

    def scratch(self, name: str) -> Path:
        return self.folder / name

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def steps_run(self, name: str) -> list[str]:
        """The steps worker ``name`` finished (the paths of their first targets)."""
        return re.findall(r"^ran (\S+) in ", self.log(name), re.MULTILINE)

    def running(self, name: str) -> bool:
        """Whether worker ``name`` is running a step now (its step's folder exists)."""
        steps = self.scratch(name) / "steps"
        return steps.is_dir() and any(steps.iterdir())

    def kill(self, name: str) -> None:
        _kill_group(self.processes[name])

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                _kill_group(process)
                process.wait()

    def __enter__(self) -> "LoopbackCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
