"""Matching a model's substitutions to its executables, and rendering what iree-compile reads.

Given the substitutions a manifest declares for one model and target and the
executables a dump of that model holds, this module checks every named
executable exists, runs the per-kernel checks, and renders the flag file and
the record of what replaced what. It does not compile anything.
"""
from __future__ import annotations

from dataclasses import dataclass

from .executables import Executable
from .manifest import Substitution, closest
from .render import render


@dataclass(frozen=True)
class Planned:
    """A substitution matched to the executable it replaces."""
    substitution: Substitution
    executable: Executable
    path: str                 # the file iree-compile is given (a built kernel, or the manifest's file)

    def as_record(self) -> dict:
        record = self.substitution.as_record()
        export = self.executable.export
        record.update(path=self.path, export=export.name, layout=export.layout.describe())
        return record


def plan(substitutions: list[Substitution], executables: dict[str, Executable],
         paths: dict[str, str] | None = None) -> list[Planned]:
    """Match each substitution to its executable; ``paths`` maps manifest files to built files."""
    paths = paths or {}
    planned = []
    for sub in substitutions:
        executable = executables.get(sub.executable)
        if executable is None:
            names = ", ".join(sorted(executables)) or "none"
            raise sub.origin.error(
                f"model '{sub.model}' has no executable '{sub.executable}' for target "
                f"'{sub.target}'{closest(sub.executable, executables)}; its executables: {names}",
                "executable")
        if not executable.exports:
            raise sub.origin.error(f"executable '{sub.executable}' has no export to replace",
                                   "executable")
        planned.append(Planned(sub, executable, paths.get(sub.file, sub.file)))
    return planned


def flag_file(planned: list[Planned]) -> str:
    subs = [{"mode": p.substitution.mode, "executable": p.substitution.executable,
             "path": p.path} for p in planned]
    return render("substitutions.flags.j2", substitutions=subs)


def record(model: str, target: str, source: str, planned: list[Planned]) -> str:
    return render("substitutions.json.j2", model=model, target=target, source=source,
                  substitutions=[p.as_record() for p in planned])


def options_file(flags: list[str]) -> str:
    return render("options.flags.j2", flags=flags)
