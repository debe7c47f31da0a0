"""Finding the programs the build drives, and asking them their versions.

IREE's wheels put Python wrappers on PATH that cost a Python start-up per call;
the native binaries beside them are used instead. Nothing here builds anything.
"""
from __future__ import annotations

import importlib.util
import os
import re
import shutil
import signal
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Mapping

from iree_kernels.core import flag_files, processes, tool_versions
from iree_kernels.core.errors import UserError, shown_output


# Command words standing for program paths that hold '$' (see command_word).
_ALIASES: dict[str, str] = {}


def command_word(path: str) -> str:
    """``path`` as the first word of a command line SCons builds and substitutes.

    SCons takes '$' as syntax even inside a Literal (``$(`` and ``$)`` are
    removed from every substituted string), so a program whose path holds '$'
    (a checkout in a folder named ``$(...)``) is named by a word without it,
    which real_program() turns back into the path where the program is run.
    """
    if "$" not in path:
        return path
    word = os.path.basename(path).replace("$", "_") or "program"
    while _ALIASES.get(word, path) != path:
        word += "_"
    _ALIASES[word] = path
    return word


def real_program(word: str) -> str:
    """The program a command word names: the path command_word() stood in for, else the word."""
    return _ALIASES.get(word, word)


def _package_dir(package: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(package)
    except ModuleNotFoundError:
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _native(package: str, libs: str, program: str) -> str | None:
    root = _package_dir(package)
    if root is not None:
        candidate = root / libs / program
        if candidate.is_file():
            return str(candidate)
    return shutil.which(program)


def iree_compile() -> str | None:
    """$IREE_COMPILE, else the native binary of the installed iree-base-compiler."""
    given = os.environ.get("IREE_COMPILE")
    return given or _native("iree.compiler", "_mlir_libs", "iree-compile")


# Environment variables that name a program outright (and, if it is missing, make it missing).
OVERRIDES = {"nvcc": "NVCC", "clang": "CLANG", "clang-19": "HIP_CLANG", "glslangValidator": "GLSLANG", "glslc": "GLSLC",
             "spirv-val": "SPIRV_VAL", "ptxas": "PTXAS"}
# How to get each program on Debian 12, for error messages.
INSTALL = {
    "nvcc": "./setup.sh installs the nvidia-cuda-nvcc wheel where no nvcc is on PATH; "
            "or set NVCC=/path/to/nvcc",
    "ptxas": "it comes with nvcc (./setup.sh)",
    "clang": "apt-get install clang (./setup.sh does)",
    "clang-19": "apt-get install clang-19 lld-19 (./setup.sh does), or set HIP_CLANG=/path/to/clang "
                "(clang 19 or newer: it compiles HIP for gfx942)",
    "glslangValidator": "apt-get install glslang-tools (./setup.sh does)",
    "glslc": "apt-get install glslc (./setup.sh does)",
    "spirv-val": "apt-get install spirv-tools (./setup.sh does)",
    "iree-opt": "it comes with iree-base-compiler (./setup.sh installs it), or set IREE_OPT=/path/to/iree-opt",
}


def _override(name: str) -> tuple[bool, str | None]:
    variable = OVERRIDES.get(name)
    if variable and os.environ.get(variable):
        path = os.environ[variable]
        return True, path if Path(path).is_file() else shutil.which(path)
    return False, None


def nvcc() -> str | None:
    """$NVCC, else nvcc on PATH, else the CUDA toolkit's, else the registry wheel's."""
    given, path = _override("nvcc")
    if given:
        return path
    for candidate in (shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and Path(candidate).is_file():
            return candidate
    wheel = _package_dir("nvidia")
    if wheel is not None:
        found = sorted(wheel.glob("cu*/bin/nvcc"))
        if found:
            return str(found[-1])
    return None


def ptxas() -> str | None:
    """$PTXAS, else the ptxas beside the nvcc in use, else ptxas on PATH."""
    given, path = _override("ptxas")
    if given:
        return path
    compiler = nvcc()
    if compiler:
        candidate = Path(compiler).with_name("ptxas")
        if candidate.is_file():
            return str(candidate)
    return shutil.which("ptxas")


HIP_CLANGS = ("clang-22", "clang-21", "clang-20", "clang-19")   # Debian's names; 14 knows no gfx942


def hip_clang() -> str | None:
    """$HIP_CLANG, else the newest clang-NN (19 or newer) on PATH: the compiler of .hip kernels."""
    given, path = _override("clang-19")
    if given:
        return path
    return next(filter(None, map(shutil.which, HIP_CLANGS)), None)


@lru_cache(maxsize=None)
def checker(name: str) -> str | None:
    """The path of a kernel checker (registry.KernelKind.checker: ptxas, spirv-val), or None.

    Asked for every module and substitution while SConscripts are read: looked up once.
    """
    return ptxas() if name == "ptxas" else on_path(name)


def on_path(name: str) -> str | None:
    """A program found on PATH (clang, glslangValidator, glslc, spirv-val, ...), or as
    its environment variable says (CLANG, GLSLANG, GLSLC, SPIRV_VAL)."""
    given, path = _override(name)
    return path if given else shutil.which(name)


# The variables limiting a tool's run time, by kind of tool (see timeout_variable), and
# their defaults in seconds (the command-line variables of iree_kernels.settings take them).
TIMEOUT_DEFAULTS = {"IREE_COMPILE_TIMEOUT": "3600", "KERNEL_COMPILE_TIMEOUT": "600",
                    "RUN_TIMEOUT": "600", "VERSION_TIMEOUT": "30"}
TIMEOUT_VARIABLES = tuple(TIMEOUT_DEFAULTS)


@dataclass(frozen=True)
class Timeouts:
    """Time limits in seconds by kind of tool (None: no limit), one per TIMEOUT_VARIABLES.

    Made once from the build's variables (``from_values``; TIMEOUT_DEFAULTS
    for any not given) and passed to what runs a tool; functions given none take
    TIMEOUT_DEFAULTS (``default_timeouts``). The variable names the limit
    in errors.
    """
    limits: tuple[float | None, ...]    # in TIMEOUT_VARIABLES' order

    @classmethod
    def from_values(cls, values: Mapping[str, object] | None = None) -> Timeouts:
        """The limits ``values`` (variable -> its value, e.g. an Environment) gives; a
        UserError naming the variable whose value is not a number of seconds."""
        limits = []
        for name in TIMEOUT_VARIABLES:
            value = (values or {}).get(name)
            value = TIMEOUT_DEFAULTS[name] if value is None else value
            try:
                limits.append(seconds(value))
            except ValueError:
                raise UserError(f"{name}={value}: expected a number of seconds up to "
                                f"{LONGEST_LIMIT} (30 days; 0: no limit)") from None
        return cls(tuple(limits))

    def of(self, variable: str) -> float | None:
        """The limit ``variable`` (one of TIMEOUT_VARIABLES) sets."""
        return self.limits[TIMEOUT_VARIABLES.index(variable)]

    def for_program(self, program: str) -> float | None:
        """The limit of ``program``'s kind of tool."""
        return self.of(timeout_variable(program))


@lru_cache(maxsize=None)
def default_timeouts() -> Timeouts:
    """The default limits: for a function called without a Timeouts."""
    return Timeouts.from_values()


def seconds(value) -> float | None:
    """A time limit as given (a number of seconds; 0 or '' for none) as a float, or None."""
    if value in (None, ""):
        return None
    number = float(value)
    if not 0 <= number <= LONGEST_LIMIT:          # NaN, negative, inf
        raise ValueError(f"{value!r} is not a number of seconds")
    return number or None


LONGEST_LIMIT = 30 * 24 * 3600      # seconds; no limit is 0


def timeout_variable(program: str) -> str:
    """The variable limiting ``program``'s run time: by what kind of tool it is."""
    name = Path(program).name
    if name.startswith(("iree-run-module", "iree-benchmark-module")):
        return "RUN_TIMEOUT"
    if name.startswith(("iree-compile", "iree-opt")):
        return "IREE_COMPILE_TIMEOUT"
    return "KERNEL_COMPILE_TIMEOUT"


def timeout_message(name: str, timeout: float | None, variable: str = "") -> str:
    variable = variable or timeout_variable(name)
    return (f"{name} did not finish within {timeout:g} s and was stopped; a tool that takes "
            f"longer needs {variable}=SECONDS (0: no limit)")


def crash_message(name: str, signal_number: int, argv: list[str] | None = None) -> str:
    """What to say about a tool killed by a signal; for iree-compile, the substituted executables."""
    try:
        what = signal.Signals(signal_number).name
    except ValueError:
        what = f"signal {signal_number}"
    message = f"{name} crashed ({what})"
    sources = _substituted_sources(argv or [])
    if sources:
        message += ("; it was compiling with the substituted executables "
                    + ", ".join(f"{e} ({p})" for e, p in sources)
                    + ": a source .mlir that does not match the executable it replaces "
                      "(shapes, layout) can crash it")
    return message


def _substituted_sources(argv: list[str]) -> list[tuple[str, str]]:
    """(executable, file) of every substitution in the flag files ``argv`` passes as @file."""
    found = []
    for arg in argv:
        if not arg.startswith("@"):
            continue
        try:
            flags = flag_files.read(Path(arg[1:]).read_text(errors="replace"))
        except (OSError, ValueError):       # not a flag file the build wrote: said nothing of
            continue
        for flag in flags:
            parsed = flag_files.parse_substitution_flag(flag)
            if parsed and parsed[0] in ("source", "object"):
                found.append(parsed[1:])
    return found


_PRINTED_ERROR_RE = re.compile(r"^(?:.*?: )?error: .*$", re.MULTILINE)


def printed_error(output: str) -> str:
    """The first ``error:`` line a tool printed ('' if none): an error whatever its exit status."""
    m = _PRINTED_ERROR_RE.search(output)
    return m.group(0).strip() if m else ""


class ToolFailed(UserError):
    """A tool ``run`` ran failed (``signal_number`` None) or was killed by a signal: ``summary``
    says which, ``printed`` is what it printed."""

    def __init__(self, summary: str, printed: str, signal_number: int | None = None,
                 file: str | None = None) -> None:
        super().__init__(f"{summary}:\n{shown_output(printed)}", file=file)
        self.summary, self.printed, self.signal_number = summary, printed, signal_number


def run(argv: list[str], *, file: str | None = None, doing: str = "",
        timeouts: Timeouts | None = None, stdin: str | os.PathLike | None = None,
        cwd: str | os.PathLike | None = None) -> str:
    """Run a tool; its standard output, or a ToolFailed holding what it printed.

    It runs within the limit ``timeouts`` (default: the settings') sets for its
    kind, reading the file ``stdin`` (default: nothing). A tool killed by a
    signal, or printing ``error:`` even with exit status 0, fails too.
    """
    argv = [real_program(argv[0]), *argv[1:]]
    name = Path(argv[0]).name
    limit = (timeouts or default_timeouts()).for_program(argv[0])
    what = f" to {doing}" if doing else ""
    try:
        result = processes.run(argv, limit=limit, stdin=stdin, cwd=cwd)
    except processes.TimeLimit:
        raise UserError(timeout_message(name, limit) + (f" ({doing})" if doing else ""),
                        file=file) from None
    except OSError as e:
        raise UserError(f"cannot run {argv[0]}{what}: {e.strerror}", file=file) from None
    return checked(argv, result, file=file, doing=doing)


def checked(argv: list[str], result: processes.Finished, *, file: str | None = None,
            doing: str = "") -> str:
    """``result``'s standard output, or the ToolFailed of a tool ``run`` ran (``argv``) that
    crashed, failed, or printed ``error:`` with exit status 0."""
    name = Path(argv[0]).name
    what = f" to {doing}" if doing else ""
    output = (_text_of(result.stdout) + _text_of(result.stderr)).strip()
    if result.returncode < 0:
        raise ToolFailed(crash_message(name, -result.returncode, argv) + what, output,
                         -result.returncode, file=file)
    if result.returncode != 0 or printed_error(output):
        raise ToolFailed(f"{name} failed{what}", output, file=file)
    return result.stdout


def _text_of(part) -> str:
    return part if isinstance(part, str) else ""


def runtime_devices(run_module: str, timeouts: Timeouts | None = None) -> list[str]:
    """The devices IREE's runtime has here (``driver://id``), from ``iree-run-module
    --list_devices``; none where it cannot say."""
    try:
        result = processes.run([real_program(run_module), "--list_devices"],
                               limit=(timeouts or default_timeouts()).of("VERSION_TIMEOUT"))
    except (OSError, processes.TimeLimit):
        return []
    return [line.strip() for line in result.stdout.splitlines() if "://" in line]


def missing_message(name: str) -> str:
    return f"{name} is not installed: {INSTALL.get(name, 'install it')}"


def iree_tool(program: str) -> str | None:
    """A runtime tool: iree-run-module, iree-benchmark-module, ..."""
    return _native("iree._runtime_libs", "", program)


_IREE_RELEASE_RE = re.compile(r"IREE compiler version (\d+)\.(\d+)")


def iree_release(program: str) -> tuple[int, int] | None:
    """(major, minor) of the IREE an iree-compile belongs to, e.g. (3, 13); None if it does not say."""
    m = _IREE_RELEASE_RE.search(version(program))
    return (int(m.group(1)), int(m.group(2))) if m else None


_kept_versions: tool_versions.VersionRecord | None = None


def keep_versions(record: tool_versions.VersionRecord | None) -> None:
    """Keep the versions ``version`` asks for in ``record`` (None: ask each run)."""
    global _kept_versions
    _kept_versions = record
    version.cache_clear()


@lru_cache(maxsize=None)
def version(program: str, flag: str = "--version", timeouts: Timeouts | None = None) -> str:
    """What a program prints for ``flag``, lines stripped and joined; '' if it cannot run.

    A program that does not answer within VERSION_TIMEOUT is a UserError:
    its version keys caches, and an empty one would match any other.
    What ``keep_versions`` was given answers for a program that has not changed.
    """
    real = real_program(program)
    record = _kept_versions
    current = tool_versions.stamp(real) if record is not None else None
    kept = record.get(real, flag, current) if record is not None else None
    if kept is not None:
        return kept
    answer = _ask_version(real, program, flag, timeouts)
    if record is not None and answer:
        record.put(real, flag, current, answer)
    return answer


def _ask_version(real: str, program: str, flag: str, timeouts: Timeouts | None) -> str:
    limit = (timeouts or default_timeouts()).of("VERSION_TIMEOUT")
    try:
        result = processes.run([real, flag], limit=limit)
    except OSError:
        return ""
    except processes.TimeLimit:
        raise UserError(f"{program} {flag} did not answer within {limit:g} s; the build keys "
                        "what a tool makes by its version, so it cannot go on without it "
                        "(VERSION_TIMEOUT=SECONDS to wait longer)") from None
    lines = [l.strip() for l in (result.stdout + result.stderr).splitlines() if l.strip()]
    return " ".join(lines)


_OPTION_RE = re.compile(r"^\s+-{1,2}([A-Za-z0-9][\w.-]*)", re.MULTILINE)


@lru_cache(maxsize=None)
def compiler_options(program: str, timeouts: Timeouts | None = None) -> frozenset[str]:
    """The option names (no dashes) ``program --help-list-hidden`` lists; empty if it lists none."""
    try:
        result = processes.run([real_program(program), "--help-list-hidden"],
                               limit=(timeouts or default_timeouts()).of("VERSION_TIMEOUT"))
    except (OSError, processes.TimeLimit):
        return frozenset()
    return frozenset(_OPTION_RE.findall(result.stdout))


def unknown_option(flag: str, known: frozenset[str]) -> str | None:
    """The name of ``flag`` (``--name=value``) if ``known`` lacks it; None if known, or nothing is known."""
    name = flag.lstrip("-").split("=", 1)[0]
    return None if not known or name in known else name


_PROBE_PROGRAM = """func.func @probe(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.addf %a, %a : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@lru_cache(maxsize=None)
def target_error(program: str, flags: tuple[str, ...], timeouts: Timeouts | None = None) -> str:
    """'' if iree-compile configures a one-op program with ``flags``; else the first error it printed.

    How to ask iree-compile whether it has a GPU target (e.g. --iree-cuda-target=sm_90,
    which IREE 3.13 refuses only once it configures an executable): about a second.
    """
    argv = [real_program(program), "-", *flags, "--compile-to=executable-configurations",
            "-o", os.devnull]
    limit = (timeouts or default_timeouts()).of("VERSION_TIMEOUT")
    try:
        result = processes.run(argv, limit=limit, input=_PROBE_PROGRAM)
    except OSError as e:
        return f"cannot run {program}: {e.strerror}"
    except processes.TimeLimit:
        return timeout_message(Path(program).name, limit, "VERSION_TIMEOUT")
    output = result.stdout + result.stderr
    if result.returncode == 0 and not printed_error(output):
        return ""
    return printed_error(output) or output.strip().splitlines()[0] if output.strip() else \
        f"{Path(program).name} exited with status {result.returncode}"


@lru_cache(maxsize=None)
def package_versions(packages: tuple[str, ...]) -> str:
    """``name==version`` of each installed Python package, or that it is not installed."""
    import importlib.metadata        # here: every scons run loads this module, few need it
    found = []
    for package in packages:
        try:
            found.append(f"{package}=={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    return ", ".join(found)
