"""Matching a model's substitutions to its executables, and rendering what iree-compile reads.

Given the substitutions a manifest declares for one model and target and the
executables a dump of that model holds, this module checks every named
executable exists, runs the per-kernel checks, and renders the flag file and
the record of what replaced what. It does not compile anything.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from . import ptx, spirv
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


@dataclass(frozen=True)
class KernelChecks:
    """The tools and limits compiled kernels are checked with; '' skips a tool."""
    ptxas: str = ""
    cuda_arch: str = "sm_80"
    ptx_isa_version: str = "9.0"
    spirv_val: str = ""
    spirv_target_env: str = "vulkan1.0"

    def check(self, planned: "Planned") -> None:
        """Raise on the first way the kernel in ``planned.path`` cannot replace its executable."""
        suffix = PurePosixPath(planned.path).suffix
        entry = f"{planned.substitution.origin.entry}, kernel {planned.substitution.file}"
        if suffix == ".ptx":
            module = ptx.read_ptx(_read_text(planned.path), planned.path)
            major, minor = (int(n) for n in self.ptx_isa_version.split("."))
            ptx.check_ptx(module, planned.path, planned.executable,
                          max_version=(major, minor), entry=entry)
            if self.ptxas:
                ptx.run_ptxas(self.ptxas, planned.path, self.cuda_arch)
        elif suffix == ".spv":
            module = spirv.read_spirv(Path(planned.path).read_bytes(), planned.path)
            if self.spirv_val:
                spirv.run_spirv_val(self.spirv_val, planned.path, self.spirv_target_env)
            spirv.check_spirv(module, planned.path, planned.executable, entry=entry)


def _read_text(path: str) -> str:
    return Path(path).read_text(encoding="utf-8", errors="replace")


def plan(substitutions: list[Substitution], executables: dict[str, Executable],
         paths: dict[str, str] | None = None,
         checks: KernelChecks | None = None) -> list[Planned]:
    """Match each substitution to its executable and check its kernel.

    ``paths`` maps executable names to the kernels the build made for them.
    """
    paths = paths or {}
    checks = checks or KernelChecks()
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
        planned.append(Planned(sub, executable, paths.get(sub.executable, sub.file)))
        checks.check(planned[-1])
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
