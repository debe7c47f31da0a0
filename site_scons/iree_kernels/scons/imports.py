"""SCons glue shared by the model importers (tools ``onnx_import``, ``torch_import``).

An importer turns a model source that iree-compile cannot read (``.onnx``,
``.pt2``) into MLIR, once per model, as a build step: ``env.IreeImportedModel``
declares it through the importer registered for the source's suffix
(``register_importer``) and returns the model reading its import. The import
runs without a shell within its timeout; a failure is one line naming the
manifest entry, the source file and the importer's last message. What the
importers run is theirs; this module only runs and reports. An import that
ran while the build was read (``scons.discovery``, for a family's
executables) is kept under ``BUILD_DIR/.families/imports``, named by its
command line, its source's SHA-256 and its importer's versions, and its
step takes it there instead of importing again.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os
import sys
from pathlib import Path, PurePosixPath

import SCons.Environment
import SCons.Errors
import SCons.Subst

from iree_kernels.core import processes, toolchains
from iree_kernels.core.stat_memo import sha256
from iree_kernels.scons.build_folder import file_memo
from iree_kernels.scons.kernels import ToolVersion
from iree_kernels.scons.nodes import named_value
from iree_kernels.scons.spawn import WholeFileCommand


class ImportCommand(WholeFileCommand):
    """``$<PREFIX>COM`` as a WholeFileCommand whose failure is one line naming the model.

    ``$<PREFIX>TIMEOUT`` bounds it; ``$<PREFIX>_MODEL`` says where the manifest
    declares the model; ``reason(output)`` reads why a failed import failed.
    """

    def __init__(self, prefix: str, reason, **kw) -> None:
        super().__init__(f"{prefix}COM", {"cmdstr": f"${prefix}COMSTR", **kw})
        self.prefix, self.reason = prefix, reason

    def execute(self, target, source, env, executor=None):
        if _taken_ahead(self.prefix, executor, env):
            return 0
        spawn = CapturingSpawn(float(env.subst(f"${self.prefix}TIMEOUT") or 0) or None,
                               bool(env.get("VERBOSE")), self.reason, f"{self.prefix}TIMEOUT")
        # env.Override would drop this call's overrides (the opset, the model) on an
        # OverrideEnvironment; wrapping keeps them.
        with_spawn = SCons.Environment.OverrideEnvironment(env, {"SPAWN": spawn})
        status = super().execute(target, source, with_spawn, executor)
        if isinstance(status, SCons.Errors.BuildError):
            model = env.get(f"{self.prefix}_MODEL")
            model_source = executor.get_all_sources()[0] if executor else source[0]
            status.errstr = (f"{model + ': ' if model else ''}cannot import {model_source}: "
                             f"{spawn.reason or status.errstr}")
        return status


AHEAD = ".families/imports"


def ahead_path(build_folder: str, argv: list[str], source_sha256: str,
               versions: list[str]) -> Path:
    """Where an import that ran ahead of its step is kept for it."""
    key = hashlib.sha256("\0".join([*argv, source_sha256, *versions]).encode()).hexdigest()
    return Path(build_folder, AHEAD, f"{key}.mlir")


def prefix_of(node) -> str:
    """The variables' prefix of the import step that makes ``node`` (IREE_IMPORT_TORCH)."""
    return getattr(node.get_builder().action, "prefix", "")


def import_argv(node) -> list[str]:
    """The command line of the import step that makes ``node``, naming ``node`` itself."""
    return [str(a) for a in node.get_build_env().subst_list(
        f"${prefix_of(node)}COM", SCons.Subst.SUBST_CMD, target=[node],
        source=node.sources)[0]]


def importer_versions(node) -> list[str]:
    """The versions of the importer that makes ``node``, as its step depends on them."""
    return [str(d.read()) for d in node.depends if hasattr(d, "read")]


def _taken_ahead(prefix: str, executor, env) -> bool:
    """Whether the import ran ahead of this step, and its output is now the target's."""
    build = env.get("BUILD_DIR")
    if executor is None or not build:
        return False
    folder = env.Dir(f"#{build}").abspath
    if not os.path.isdir(os.path.join(folder, AHEAD)):    # no import ran ahead: hash nothing
        return False
    node, source = executor.get_all_targets()[0], executor.get_all_sources()[0]
    kept = ahead_path(folder, import_argv(node),
                      sha256(file_memo(env), source.abspath), importer_versions(node))
    try:
        os.replace(kept, node.abspath)
    except OSError:
        return False
    return True


class CapturingSpawn:
    """A SPAWN without a shell that keeps what the importer printed and says why it failed."""

    def __init__(self, timeout: float | None, verbose: bool, reason, variable: str) -> None:
        self.timeout, self.verbose, self.reason_of, self.variable = timeout, verbose, reason, variable
        self.reason = ""

    def __call__(self, sh, escape, cmd, args, env):
        # The program (this Python) may be named by a stand-in word (program()): its
        # path holds '$' in a checkout in such a folder.
        args = [toolchains.real_program(args[0]), *args[1:]]
        try:
            result = processes.run(args, limit=self.timeout, env=env, stderr=processes.STDOUT)
        except OSError as e:
            self.reason = f"cannot run {args[0]}: {e.strerror}"
            return 127
        except processes.TimeLimit:
            self.reason = f"the importer took more than {self.timeout:g} s ({self.variable})"
            return 124
        if result.returncode == 0 or self.verbose:
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
        if result.returncode != 0:
            self.reason = self.reason_of(result.stdout) or f"exit status {result.returncode}"
        return result.returncode


class PackageVersions(ToolVersion):
    """The installed versions of the Python packages an importer is made of, as a tool's version.

    Keys the import like a compiler's ``--version`` keys what it compiles, and
    the release's lock record names it under ``name`` (``iree-import-torch``).
    """

    def __init__(self, name: str, versions) -> None:
        super().__init__(name)
        self.versions = versions

    def __str__(self) -> str:
        return self.versions()


def package_versions(name: str, versions):
    """The Value node of an importer's package versions (``versions()``), one per name and run
    (named_value finds it again by its name)."""
    return named_value(PackageVersions(name, versions), f"{name} packages")


def register_importer(env, suffix: str, declare) -> None:
    """Make ``declare(env, model, folder) -> node`` import the models whose source ends in ``suffix``."""
    importers = dict(env.get("IREE_IMPORTERS") or {})
    importers[suffix] = declare
    env["IREE_IMPORTERS"] = importers
    env.AddMethod(imported_model, "IreeImportedModel")


def manifest_entry(model) -> str:
    """Where the manifest declares ``model``: for the one-line error."""
    origin = model.origin
    where = f"{origin.file}:{origin.line}" if origin.line else origin.file
    return f"{where}: {origin.entry}"


def imported_model(env, model, folder):
    """``model`` reading its import into ``folder/<name>.mlir`` where an importer takes its source."""
    declare = (env.get("IREE_IMPORTERS") or {}).get(PurePosixPath(model.source).suffix)
    if declare is None:
        return model
    imported = declare(env, model, folder.File(f"{model.name}.mlir"))
    return dataclasses.replace(model, source=imported[0].get_path())
