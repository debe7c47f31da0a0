"""What the test suite's fork server (tests/scons_forks.py) saves a scons run: the same build
started afresh and forked, interleaved.

    ./setup.sh python -m bench.scons_forks [--repeat 9]

Two repos in a temporary folder, each built once: the demo repo (SConstruct, kernels/,
models/) for llvm-cpu, and one model (models/mlp.mlir) with no kernels. Then, ``--repeat``
times and alternating, a no-op ``scons -Q`` started afresh and forked, and one where a
kernel is touched (its bytes unchanged: SCons reads it and rebuilds nothing). Prints the
median wall seconds of each and their ratio.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from bench.build_times import copy_demo
from tests import harness, scons_forks

REPO = Path(__file__).resolve().parents[1]
TARGET = "IREE_TARGETS=llvm-cpu"


def timed(root: Path, forks, touch: Path | None = None) -> float:
    if touch:
        os.utime(touch)
    build = harness.run(harness.scons_argv(TARGET), root, forks=forks,
                        env={**harness.SCONS_ENVIRONMENT, "IREE_KERNELS_CACHE_DIR": None})
    if not build.ok:
        raise SystemExit(build.failure(tail=3000))
    return build.seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    repeat = parser.parse_args().repeat
    server = scons_forks.Server(harness.SCONS, harness.SITE_DIR,
                                harness.environment_with(harness.SCONS_ENVIRONMENT))
    with tempfile.TemporaryDirectory() as scratch:
        demo = copy_demo(Path(scratch))
        single = Path(scratch) / "one-model"
        (single / "models").mkdir(parents=True)
        (single / "kernels").mkdir()
        shutil.copy(REPO / "SConstruct", single)
        shutil.copy(REPO / "models/mlp.mlir", single / "models")
        cases = {"demo repo, no-op": (demo, None),
                 "demo repo, a kernel touched": (demo, demo / "kernels/llvm-cpu/mlp_square_relu.mlir"),
                 "one model, no-op": (single, None)}
        for root in (demo, single):
            timed(root, None)
        print(f"{'scons -Q ' + TARGET:34} {'afresh':>8} {'forked':>8} {'ratio':>6}   "
              f"(median s of {repeat})")
        for name, (root, touch) in cases.items():
            times = {"afresh": [], "forked": []}
            for _ in range(repeat):
                times["afresh"].append(timed(root, None, touch))
                times["forked"].append(timed(root, server, touch))
            fresh, forked = (statistics.median(times[k]) for k in ("afresh", "forked"))
            print(f"{name:34} {fresh:8.3f} {forked:8.3f} {fresh / forked:5.2f}x")
    server.close()


if __name__ == "__main__":
    main()
