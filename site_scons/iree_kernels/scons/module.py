"""What IreeKernelProject declares for one module: one record that every tool builds on.

The project tool (``site_tools/iree_project.py``) declares a module's front
end, kernels, substitution flags and the module itself, then hands this
record to the tools that add to it (check, verify, microbenchmarks, hotspots,
the dump listing, the release). No tool reads another's data by a string key.
Also here: the small helpers those tools share (file names, skipped checks).
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import SCons.Action
import SCons.Errors
import SCons.Script

from iree_kernels.check import expected_outputs
from iree_kernels.core.errors import UserError
from iree_kernels.project.records import Model, Substitution
from iree_kernels.scons.reporting import fail
from iree_kernels.ir.targets import ModuleTarget, Target

# Beside executables.mlir where a model has substitutions: its executables alone, without the
# weights (IreeExecutableOps), what every step reading only executables reads.
EXECUTABLE_OPS = "executables.ops.mlir"
# Beside it: what the checks read of each executable (iree_kernels.ir.listing, IreeExecutableListing).
EXECUTABLE_LISTING = "executables.json"


@dataclass(frozen=True)
class DeclaredKernel:
    """What the build makes of one substitution's kernel file."""
    kernel: object                 # the node iree-compile gets: the file, or what was made of it
    wrapper: object = None         # wrapped mode: the hal.executable that links it

    @property
    def nodes(self) -> list:
        return [self.kernel] + ([self.wrapper] if self.wrapper is not None else [])

    @property
    def replacement(self):
        """The MLIR file put in place of the executable's source, or None (object mode)."""
        if self.wrapper is not None:
            return self.wrapper
        return self.kernel if self.kernel.get_suffix() == ".mlir" else None


@dataclass(frozen=True)
class DeclaredModule:
    """One model built for one target (and architecture), as SCons nodes."""
    model: Model
    where: ModuleTarget
    folder: object                 # build/<where.folder>/<model>/
    options: object                # options.flags: the target's and the manifest's flags
    executables: object            # executables.mlir: the program after IREE's front end
    substitutions: tuple[Substitution, ...]
    resolved: object               # resolved.json (where there are substitutions), else None
    kernels: dict[str, DeclaredKernel]   # by Substitution.key
    flag_file: object              # substitutions.flags
    record: object                 # substitutions.json
    module: object                 # the .vmfb
    missing_tools: tuple[str, ...] = field(default=())   # programs this machine lacks for it
    families: object = None        # families.txt: what its family entries took, if any

    @property
    def target(self) -> Target:
        return self.where.target

    @property
    def executable_ops(self):
        """The node of ``EXECUTABLE_OPS`` (where the module has substitutions)."""
        return self.folder.File(EXECUTABLE_OPS)

    @property
    def made_kernels(self) -> list:
        return [node for made in self.kernels.values() for node in made.nodes]

    @property
    def checkout_files(self) -> list[str]:
        """The repository's files the module is made from: the model, kernels and objects."""
        return [self.model.source, *(s.file for s in self.substitutions if s.file),
                *(s.passes_file for s in self.substitutions if s.passes_file),
                *(o for s in self.substitutions for o in s.objects)]


def file_name(key: str) -> str:
    """A file name for an executable (or a substitution's key); names that had to change
    get a hash, so none collide."""
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    if name == key:
        return name
    return f"{name}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"


def imply(env, word: str, by: str) -> None:
    """Make the command-line target ``by`` (exactly) count as asking for ``word`` in ``wanted``
    of ``env`` and the environments cloned from it later: 'release' with RELEASE_CHECK=yes asks
    for 'check' too. Carried by the environment (``$IREE_IMPLIED_TARGETS``: (by, word) pairs)."""
    env["IREE_IMPLIED_TARGETS"] = (*env.get("IREE_IMPLIED_TARGETS", ()), (by, word))


def wanted(env, *words) -> bool:
    """Whether a target on the command line names one of ``words`` (or scons -c)."""
    if SCons.Script.GetOption("clean"):
        return True
    named = [str(t) for t in SCons.Script.COMMAND_LINE_TARGETS]
    implied = env.get("IREE_IMPLIED_TARGETS", ())
    return any(w in t for t in named for w in words) or \
        any((t, w) in implied for t in named for w in words)


def releasing() -> bool:
    """Whether 'release' is a target on the command line."""
    return "release" in map(str, SCons.Script.COMMAND_LINE_TARGETS)


def building_as_released() -> bool:
    """Whether the modules are built as a release ships them (linked): for 'release', and for
    'verify-release', which rebuilds them to compare."""
    return releasing() or "verify-release" in map(str, SCons.Script.COMMAND_LINE_TARGETS)


def strict_checks(env) -> bool:
    """Whether a skipped check fails: CHECK_STRICT=yes, or 'release' with RELEASE_CHECK=yes."""
    return bool(env["CHECK_STRICT"] or env.get("RELEASE_CHECK") and releasing())


def failing(message: str, line: str = "MISSING  $TARGET"):
    """An action that fails with ``message`` (already escaped where it holds '$')."""
    def fail_build(target, source, env):
        raise SCons.Errors.BuildError(node=target[0], errstr=message, exitstatus=2)
    return SCons.Action.Action(fail_build, line)


def skipped(env, name: str, message: str, built=()):
    """An alias printing ``message`` (escaped) that a strict 'scons check' fails (``strict_checks``).

    ``built``: what it would have checked, built first all the same: a skipped
    check never leaves a stale module behind a green 'scons check'.
    """
    if strict_checks(env) and wanted(env, "check"):
        why = "CHECK_STRICT=yes" if env["CHECK_STRICT"] else "RELEASE_CHECK=yes"
        return env.AlwaysBuild(env.Alias(name, list(built), failing(
            f"{message} ({why})", "SKIPPED  $TARGET")))
    alias = env.Alias(name, list(built),
                      SCons.Action.Action(lambda target, source, env: None, message))
    env.AlwaysBuild(alias)
    return alias


def expected_cases(env, declared: DeclaredModule) -> list:
    """The cases of the model's expected outputs that apply to the module's target."""
    try:
        return expected_outputs.load_cases(declared.model.expected, declared.target.name,
                                 env.Dir("#").abspath, env["BUILD_DIR"])
    except UserError as e:
        fail(str(e))


def case_files(env, cases) -> list:
    """The files (inputs, outputs) the cases name, as nodes."""
    top = env.Dir("#")          # Dir.File: the path is not substituted
    return [top.File(path) for path in expected_outputs.referenced_files(cases)]
