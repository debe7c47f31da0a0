"""What compiling a model unlinked (RELINK's unlinked module) costs on llvm-cpu, and where.

    ./setup.sh python -m bench.unlinked_cost MODEL.mlir [--repeat 3]

Times iree-compile of MODEL with the build's llvm-cpu options (linked as plain, unlinked as
``--iree-hal-link-executables=false``, each with and without the sources' dump), interleaved,
medians of --repeat, and counts the embedded linker's runs (one ``iree-lld`` process an
executable when unlinked, one in all when linked) with their summed wall time, through a
wrapper named by ``IREE_LLVM_EMBEDDED_LINKER_PATH``. The executables' count is the dump's.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.ir.targets import REPRODUCIBLE_FLAGS, TARGETS
from iree_kernels.module.relink import UNLINKED

OPTIONS = [*TARGETS["llvm-cpu"].flags(), *REPRODUCIBLE_FLAGS]     # the build's, as options.flags
RUNS = {"linked": [], "linked + dump": ["dump"], "unlinked": [UNLINKED],
        "unlinked + dump": [UNLINKED, "dump"]}
LINKER = """#!/bin/sh
start=$(date +%s%N)
"{real}" "$@"
status=$?
echo $(( $(date +%s%N) - start )) >> "{log}"
exit $status
"""


def compile_once(model: Path, extra: list[str], work: Path, linker: Path, log: Path) -> dict:
    dump = work / "dump"
    shutil.rmtree(dump, ignore_errors=True)
    log.unlink(missing_ok=True)
    argv = [toolchains.iree_compile(), str(model), *OPTIONS,
            *(f"--iree-hal-dump-executable-sources-to={dump}" if e == "dump" else e for e in extra),
            "-o", str(work / "out.vmfb")]
    start, cpu = time.perf_counter(), os.times()
    subprocess.run(argv, check=True, capture_output=True, timeout=1800,
                   env={**os.environ, "IREE_LLVM_EMBEDDED_LINKER_PATH": str(linker)})
    after = os.times()
    links = [int(line) / 1e9 for line in log.read_text().split()] if log.exists() else []
    return {"wall": time.perf_counter() - start,
            "cpu": after.children_user + after.children_system - cpu.children_user
            - cpu.children_system,
            "links": len(links), "link s": sum(links),
            "executables": len(list(dump.glob("*.mlir"))) if dump.is_dir() else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    real = Path(toolchains.iree_compile()).with_name("iree-lld")
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        log, linker = work / "links.log", work / "iree-lld"
        linker.write_text(LINKER.format(real=real, log=log))
        linker.chmod(0o755)
        runs: dict[str, list[dict]] = {name: [] for name in RUNS}
        for _ in range(args.repeat):
            for name, extra in RUNS.items():
                runs[name].append(compile_once(args.model.resolve(), extra, work, linker, log))
    executables = next(r["executables"] for r in runs["unlinked + dump"])
    print(f"{args.model.name}: {executables} executables, {len(os.sched_getaffinity(0))} cores, "
          f"median of {args.repeat}")
    print("| iree-compile | wall s | CPU s | linker runs | linker s (summed) |")
    print("|---|---|---|---|---|")
    base = statistics.median(r["wall"] for r in runs["linked"])
    for name, measured in runs.items():
        wall = statistics.median(r["wall"] for r in measured)
        print(f"| {name} | {wall:.2f} ({wall / base:.2f}x) "
              f"| {statistics.median(r['cpu'] for r in measured):.2f} "
              f"| {measured[0]['links']} | {statistics.median(r['link s'] for r in measured):.2f} |")


if __name__ == "__main__":
    main()
