"""Where a clean build's and a kernel edit's time goes, step by step (``scons --debug=time``).

    ./setup.sh python -m bench.edit_steps MODEL TARGET [--kernels native|mlir] [VARIABLE=VALUE ...]

builds one of bench/real_models.py's models in a new repo with a kernel scaffolded in the
target's language (``--kernels mlir``: a dumped executable as an MLIR source kernel; default
settings, or the variables given), then edits the kernel as that
bench does, and prints for the clean build and the edit each step's command execution time,
SCons's own time and the wall time, beside a plain iree-compile of the model.
"""
from __future__ import annotations

import os
import re
import sys
import tempfile
import time
from pathlib import Path

from bench import real_models

STEP = re.compile(r"^(?P<step>[A-Z]+) +(?P<target>\S+)")
TIME = re.compile(r"^Command execution time: (?P<what>.*?): (?P<seconds>[0-9.]+) seconds")
TOTALS = re.compile(r"^Total (build|SConscript file execution|SCons execution|command execution) "
                    r"time: ([0-9.]+) seconds")


def steps(out: str) -> list[str]:
    """One line a step: its name, target and command time, then SCons's totals."""
    named = {}
    for line in out.splitlines():
        found = STEP.match(line)
        if found:
            named[found["target"]] = found["step"]
    lines = []
    for line in out.splitlines():
        found = TIME.match(line)
        if found:
            target = found["what"].split(" and ")[0]
            step = named.get(target) or Path(target).suffix[1:].upper() or "?"
            lines.append(f"  {step:<9}{found['seconds']:>7} s  {target}")
        total = TOTALS.match(line)
        if total:
            lines.append(f"  total {total[1]}: {total[2]} s")
    return lines


def main() -> None:
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    model, target, variables = sys.argv[1], sys.argv[2], sys.argv[3:]
    kernels = ("native",)
    if variables[:1] == ["--kernels"] and len(variables) > 1:
        kernels, variables = (variables[1],), variables[2:]
    jobs = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as work:
        work = Path(work)
        text = real_models.model_text(model, work)
        repo = real_models.Repo(work / "repo", model, target, False, jobs, work /
                                "shared", True, kernels)
        repo.variables = [f"IREE_TARGETS={target}", *variables]
        repo.create(text)
        kernel, source = repo.scaffold()
        kernel = kernel or source
        if kernel is None:
            raise SystemExit(f"bench: no compiler here for {target}'s kernels")
        plain = real_models.plain(repo, text, work)
        print(f"{model} on {target}, {jobs} jobs; plain {plain['plain']:.2f} s "
              f"(front end {plain['front end']:.2f}, codegen {plain['codegen']:.2f}, host "
              f"{plain['host']:.2f}); kernel {kernel.relative_to(repo.root)}")
        repo.reset()
        for what in ("clean", "kernel edit"):
            if what == "kernel edit":
                repo.edit(kernel)
            start = time.monotonic()
            _, out, _ = repo.scons("--debug=time")
            print(f"{what}: {time.monotonic() - start:.2f} s wall")
            print("\n".join(steps(out)))


if __name__ == "__main__":
    main()
