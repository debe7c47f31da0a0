"""Wall time and tool invocations of a clean, a no-op and a one-kernel-touch build of the demo repo.

    ./setup.sh python -m bench.build_times [--repeat N] [VARIABLE=value ...]

The demo repo (SConstruct, kernels/, models/) is copied to a temporary folder
so the checkout's own build/ is left alone. Prints one table; medians of N runs.
"""
from __future__ import annotations

import argparse
import collections
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tests import harness

REPO = Path(__file__).resolve().parents[1]

TOOLS = {"IREE": "iree-compile", "FRONTEND": "iree-compile", "PTX": "nvcc", "SPIRV": "glslang",
         "CC": "clang", "CHECK": "iree-run-module", "CODEGEN": "executables into the codegen cache"}


def scons(root: Path, *args: str) -> tuple[float, collections.Counter]:
    build = harness.scons(root, *args, env={"IREE_KERNELS_CACHE_DIR": None})
    if not build.ok:
        raise SystemExit(build.failure(tail=3000))
    return build.seconds, build.step_counts()


def copy_demo(into: Path) -> Path:
    root = into / "demo"
    root.mkdir()
    shutil.copy(REPO / "SConstruct", root)
    for folder in ("kernels", "models"):
        shutil.copytree(REPO / folder, root / folder)
    return root


def touch_one_kernel(root: Path) -> None:
    kernel = sorted((root / "kernels").rglob("*.mlir"))[0]
    kernel.write_text(kernel.read_text() + f"// touched {time.time()}\n")


def measure(args) -> dict[str, list]:
    results = collections.defaultdict(list)
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            root = copy_demo(Path(tmp))
            options = (f"-j{args.jobs}", *args.variables)
            results["clean"].append(scons(root, *options))
            results["no-op"].append(scons(root, *options))
            touch_one_kernel(root)
            results["one kernel touched"].append(scons(root, *options))
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("variables", nargs="*", help="build variables, e.g. EXECUTABLE_CACHE=0")
    args = parser.parse_args()
    results = measure(args)
    clean = statistics.median(t for t, _ in results["clean"])
    print(f"demo repo, scons -j{args.jobs} {' '.join(args.variables)}, median of {args.repeat}")
    print(f"{'build':<20} {'wall s':>7} {'/clean':>7}  tool invocations")
    for name, runs in results.items():
        wall = statistics.median(t for t, _ in runs)
        steps = runs[-1][1]
        tools = collections.Counter()
        for kind, count in steps.items():
            if kind in TOOLS:
                tools[TOOLS[kind]] += count
        shown = ", ".join(f"{tool} x{n}" for tool, n in sorted(tools.items())) or "none"
        print(f"{name:<20} {wall:7.2f} {wall / clean:7.2f}  {shown}")


if __name__ == "__main__":
    main()
