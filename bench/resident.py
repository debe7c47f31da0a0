"""A kernel edit in a resident build (``scons --interactive``) against the same edit in one-shot runs.

    ./setup.sh python -m bench.resident REPO KERNEL [--edits N] [-j N] [VARIABLE=value ...]

REPO is a project already built once; KERNEL one of its MLIR source kernels
(``scons scaffold LANGUAGE=mlir`` writes one). Each edit moves the kernel's
first f32 constant (``kernel_edits``: what it compiles to changes). The
resident build keeps SCons, the tools and the graph loaded: ``build`` at its
prompt after each edit, then ``build`` again (a no-op). The one-shot rows run
``scons`` twice per edit, as a user at a shell does. Prints medians of
--edits, seconds, and the steps the resident build ran.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import kernel_edits

SCONS = Path(sys.executable).with_name("scons")
SITE = Path(__file__).resolve().parents[1] / "site_scons"
PROMPT = "scons>>>"
TIMEOUT = 1800
# What a user's scons runs with: Python writes its bytecode (see real_models.py).
ENVIRONMENT = {k: v for k, v in os.environ.items()
               if k not in ("PYTHONDONTWRITEBYTECODE", "IREE_KERNELS_CACHE_DIR")}


def edit(kernel: Path, number: int) -> None:
    text = kernel.read_text()
    changed = kernel_edits.edit_mlir_kernel(text, number)
    if changed == text:
        raise SystemExit(f"bench: nothing to edit in {kernel}")
    kernel.write_text(changed)


class Resident:
    def __init__(self, argv: list[str], root: Path) -> None:
        self.process = subprocess.Popen(argv + ["--interactive"], cwd=root, text=True,
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, env=ENVIRONMENT)
        self.started = self._until_prompt()[0]

    def _until_prompt(self) -> tuple[float, str]:
        begun, seen = time.monotonic(), ""
        while not seen.endswith(PROMPT):
            char = self.process.stdout.read(1)
            if not char:
                raise SystemExit(f"bench: scons --interactive ended:\n{seen[-3000:]}")
            seen += char
            if time.monotonic() - begun > TIMEOUT:
                raise SystemExit("bench: scons --interactive did not answer in time")
        return time.monotonic() - begun, seen

    def build(self) -> tuple[float, str]:
        self.process.stdin.write("build\n")
        self.process.stdin.flush()
        return self._until_prompt()

    def close(self) -> None:
        self.process.stdin.write("exit\n")
        self.process.stdin.flush()
        self.process.wait(TIMEOUT)


def one_shot(argv: list[str], root: Path) -> float:
    begun = time.monotonic()
    subprocess.run(argv, cwd=root, check=True, capture_output=True, timeout=TIMEOUT,
                   env=ENVIRONMENT)
    return time.monotonic() - begun


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path)
    parser.add_argument("kernel", type=Path)
    parser.add_argument("--edits", type=int, default=3)
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("variables", nargs="*")
    args = parser.parse_args()
    argv = [str(SCONS), f"--site-dir={SITE}", "-Q", f"-j{args.jobs}", *args.variables]
    kernel = args.kernel if args.kernel.is_absolute() else args.repo / args.kernel
    times: dict[str, list[float]] = {"resident edit": [], "resident no-op": [],
                                     "one-shot edit": [], "one-shot no-op": []}
    resident = Resident(argv, args.repo)
    steps = []
    for n in range(args.edits):
        edit(kernel, 2 * n)
        seconds, output = resident.build()
        times["resident edit"].append(seconds)
        steps = [line.split()[0] for line in output.splitlines()
                 if line.split() and line.split()[0].isupper()]
        times["resident no-op"].append(resident.build()[0])
    resident.close()
    for n in range(args.edits):
        edit(kernel, 2 * n + 1)
        times["one-shot edit"].append(one_shot(argv, args.repo))
        times["one-shot no-op"].append(one_shot(argv, args.repo))
    print(f"{len(os.sched_getaffinity(0))} cores, -j{args.jobs}, medians of {args.edits}; "
          f"resident start {resident.started:.2f} s; an edit ran {' '.join(steps)}")
    for row, values in times.items():
        print(f"{row:<16}{statistics.median(values):8.2f} s")


if __name__ == "__main__":
    main()
