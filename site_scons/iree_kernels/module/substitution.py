"""Matching a model's substitutions to its executables, and rendering what iree-compile reads.

Given the substitutions a manifest declares for one model and target and the
executables a dump of that model holds, this module checks every named
executable exists, runs the per-kernel checks, and renders the flag file and
the record of what replaced what. It does not compile anything.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from iree_kernels.core import flag_files, toolchains
from iree_kernels.core.errors import UserError, closest
from iree_kernels.ir.executables import Executable
from iree_kernels.project.records import Substitution
from iree_kernels.module.selection import Landing
from iree_kernels.kinds.registry import kernel_kind
from iree_kernels.core.render import render


OBJECT_SEARCH_PATH_FLAG = "--iree-hal-executable-object-search-path"


@dataclass(frozen=True)
class Planned:
    """A substitution matched to the executable it replaces."""
    substitution: Substitution
    executable: Executable
    path: str                 # the kernel: the manifest's file, or what the build made of it
    wrapper: str = ""         # wrapped mode: the generated hal.executable linking the kernel
    fingerprint: str = ""     # the executable's (fingerprints.fingerprint)

    @property
    def flag(self) -> str:
        """The substitution flag for iree-compile; a wrapper is substituted as a source."""
        if self.wrapper:
            return flag_files.substitution_flag("source", self.executable.name, self.wrapper)
        return flag_files.substitution_flag(self.substitution.mode, self.executable.name,
                                            self.path)

    @property
    def flags(self) -> list[str]:
        """What iree-compile needs to apply it: the flag, after the kernel's object search path."""
        folder = self.substitution.object_search_path
        return ([f"{OBJECT_SEARCH_PATH_FLAG}={folder}"] if folder and not self.wrapper else []) \
            + [self.flag]

    def as_record(self) -> dict:
        record = self.substitution.as_record()
        export = self.executable.export
        record.update(executable=self.executable.name, export=export.name,
                      fingerprint=self.fingerprint, path=self.path,
                      layout=export.layout.describe(), flag=self.flag)
        if len(self.flags) > 1:
            record.update(flags=self.flags)
        if self.wrapper:
            record.update(wrapper=self.wrapper,
                          workgroup_count=list(self.substitution.workgroup_count),
                          workgroup_size=list(self.substitution.workgroup_size))
        return record


@dataclass(frozen=True)
class KernelChecks:
    """What compiled kernels are checked with: each kind's check (``registry.KernelKind.check``)
    given the values of the variables it names (``settings``; its entry's defaults for those
    not given), its checker's path (``checkers``, by program name; absent or '': missing)
    and the time limits (None: the settings' defaults)."""
    settings: Mapping[str, str] = field(default_factory=dict)
    checkers: Mapping[str, str] = field(default_factory=dict)
    timeouts: toolchains.Timeouts | None = None

    def check(self, planned: "Planned") -> None:
        """Raise on the first way the kernel in ``planned.path`` cannot replace its executable.

        The error starts with the manifest's file:line and entry, then names the
        kernel (and what the build compiled it to) and, where a pattern finds
        it, the line of the kernel's source the mistake is on.
        """
        sub = planned.substitution
        try:
            self._check(planned)
        except UserError as e:
            kernel = sub.file if planned.path == sub.file else \
                f"{sub.file} (compiled to {planned.path})"
            inner = UserError(e.message, file=e.file if e.line else None, line=e.line)
            hint = _source_line(sub.file, e.message) if planned.path != sub.file else ""
            raise UserError(f"kernel {kernel}: {inner}{hint}", file=sub.origin.file,
                            line=sub.origin.line, entry=sub.origin.entry) from None

    def _check(self, planned: "Planned") -> None:
        kind = kernel_kind(planned.path)
        if kind and kind.check:
            values = {name: self.settings.get(name) or default
                      for name, default in kind.check_settings}
            # What its source's kind compiled it for, where that is not the module's.
            source = kernel_kind(planned.substitution.file)
            if source is not None and source.check_overrides is not None:
                values.update({name: value for name, value in
                               source.check_overrides(planned.substitution).items()
                               if name in values})
            kind.check(planned, values, self.checkers.get(kind.checker, "") if kind.checker
                       else "", self.timeouts)


class _Unchecked(KernelChecks):
    def check(self, planned: "Planned") -> None:
        pass


# For a step that only needs to know which executable a substitution replaces (the
# wrapper's); the substitution step checks the kernel, with the module's architecture.
UNCHECKED = _Unchecked()


# What a kernel check's message is about -> the source line saying it (GLSL, CUDA).
_SOURCE_PATTERNS = [
    (r"binding (\d+) is in descriptor set (\d+)", r"set\s*=\s*{1}\s*,\s*binding\s*=\s*{0}\b"),
    (r"bindings 0\.\.\d+, found \[[^\]]*?(\d+)\]", r"binding\s*=\s*{0}\b"),
    (r"binding (\d+)", r"binding\s*=\s*{0}\b"),
    (r"local_size", r"local_size_[xyz]"),
    (r"push-constant", r"push_constant"),
    (r"\.entry|parameters", r"__global__"),
]


def _source_line(file: str, message: str) -> str:
    """' (at kernels/k.glsl:12)': the kernel source line a check's message points at, or ''."""
    for about, pattern in _SOURCE_PATTERNS:
        m = re.search(about, message)
        if not m:
            continue
        try:
            lines = Path(file).read_text(errors="replace").splitlines()
        except OSError:
            return ""
        wanted = re.compile(pattern.format(*m.groups()))
        for number, line in enumerate(lines, 1):
            if wanted.search(line):
                return f" (at {file}:{number})"
        return ""
    return ""


def plan_substitutions(substitutions: list[Substitution], executables: dict[str, Executable],
                       paths: dict[str, str] | None = None,
                       checks: KernelChecks | None = None,
                       landed: dict[str, Landing] | None = None) -> list[Planned]:
    """Match each substitution to its executable and check its kernel.

    ``paths`` maps substitution keys (``Substitution.key``) to what the build
    made for them: ``{"kernel": path, "wrapper": path}`` (the wrapper only in
    wrapped mode). ``landed``: where each substitution's selector landed
    (``selection.resolve``); without it substitutions are matched by name only.
    """
    paths = paths or {}
    checks = checks or KernelChecks()
    if landed is None:
        landed = {s.key: Landing(s.executable, "", "") for s in substitutions}
    planned = []
    for sub in substitutions:
        landing = landed.get(sub.key)
        executable = executables.get(landing.executable) if landing else None
        if executable is None:
            names = ", ".join(sorted(executables)) or "none"
            raise sub.origin.error(
                f"model '{sub.model}' has no executable '{sub.executable}' for target "
                f"'{sub.target}'{closest(sub.executable, executables)}; its executables: {names}",
                "executable")
        if not executable.exports:
            raise sub.origin.error(f"executable '{executable.name}' has no export to replace",
                                   "executable")
        made = paths.get(sub.key, {})
        planned.append(Planned(sub, executable, made.get("kernel", sub.file),
                               made.get("wrapper", ""), landing.fingerprint))
        checks.check(planned[-1])
    return planned


def flag_file(planned: list[Planned]) -> str:
    """substitutions.flags: one flag a substitution."""
    return flag_files.write(dict.fromkeys(flag for p in planned for flag in p.flags))


def record(model: str, target: str, source: str, planned: list[Planned]) -> str:
    """substitutions.json: what was substituted into one module (read back by read_record)."""
    return render("substitutions.json.j2", model=model, target=target, source=source,
                  substitutions=[p.as_record() for p in planned])


@dataclass(frozen=True)
class Applied:
    """One substitution as substitutions.json records it (Planned.as_record)."""
    model: str
    target: str
    executable: str            # the executable it replaced
    export: str
    file: str                  # the kernel, as the manifest names it
    flag: str                  # the iree-compile flag that applies it
    fields: dict               # every recorded field, for the release's lock record

    @property
    def flags(self) -> list[str]:
        """Every flag that applies it (Planned.flags)."""
        return list(self.fields.get("flags", [self.flag]))

    @property
    def kernel(self) -> str:
        """The kernel as people know it: the manifest's file, or a derived kernel's path."""
        return self.file or self.fields.get("path", "")


@dataclass(frozen=True)
class Record:
    """substitutions.json: a module's model, target, source and the substitutions applied."""
    model: str
    target: str
    source: str
    substitutions: tuple[Applied, ...]

    def applied(self, executable: str) -> Applied:
        """The substitution that replaced ``executable``; KeyError where none did."""
        for applied in self.substitutions:
            if applied.executable == executable:
                return applied
        raise KeyError(executable)


def read_record(text: str) -> Record:
    data = json.loads(text)
    return Record(data["model"], data["target"], data["source"], tuple(
        Applied(s["model"], s["target"], s["executable"], s["export"], s["file"], s["flag"], s)
        for s in data["substitutions"]))
