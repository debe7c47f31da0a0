"""A clean build of the demo (or models) locally and through a loopback Dask cluster.

    ./setup.sh python -m bench.remote_steps [--targets llvm-cpu] [--workers 2[,4]]
        [--threads 1] [-j N] [--repeat N] [--corpus NAME,...]

In two checkouts of the same files (this repo's kernels/ and models/, or with --corpus the
corpus's models of those names, bench/corpus.py, without kernels; taken from
$IREE_KERNELS_BENCH_MODELS/<name>.mlir where it is there), each run is a clean ``scons -jN`` (build folder
removed): locally, then with DASK_SCHEDULER naming a scheduler and --workers worker
processes of --threads threads on this machine (``python -m iree_kernels scheduler|worker``,
sharing nothing but the network), a new cluster for each worker count. Printed: the
medians of --repeat (wall s), the ratio to the local build, the steps that went and, per
step, the seconds between sending it and taking its files beyond the worker's own run
(the overhead: sending the inputs, scheduling, laying out the folder, taking the files
back), the bytes moved, and the build's one-off cost of importing Dask and connecting. Every remote build's modules must be the local build's bytes,
and ``scons --question`` must be 0 after it.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from tests import harness

REPO = Path(__file__).resolve().parents[1]
CONNECTED = re.compile(r"connected in ([\d.]+) s")
RAN_ON = re.compile(r"^\s+(\S+) ran on (\S+) in ([\d.]+) s \(([\d.]+) s here, ([\d.]+) (MB|kB) "
                    r"sent, ([\d.]+) (MB|kB) back\)", re.MULTILINE)
UNIT = {"MB": 1e6, "kB": 1e3}


def checkout(root: Path, corpus: list[str], targets: str) -> None:
    root.mkdir(parents=True)
    shutil.copyfile(REPO / "SConstruct", root / "SConstruct")
    if not corpus:
        for name in ("kernels", "models"):
            shutil.copytree(REPO / name, root / name)
        return
    carried = Path(os.environ.get("IREE_KERNELS_BENCH_MODELS", "/nonexistent"))
    sources = {}
    for name in corpus:
        if (carried / f"{name}.mlir").is_file():     # imported elsewhere (bench/gpu_machine.sh)
            (root / "models").mkdir(exist_ok=True)
            shutil.copyfile(carried / f"{name}.mlir", root / "models" / f"{name}.mlir")
            sources[name] = f"{name}.mlir"
        else:
            from bench import corpus as generator     # deferred: numpy, onnx, torch
            entry, = generator.write(root / "models", [name], root=root)
            sources[name] = entry.source
    (root / "kernels").mkdir()
    listed = ", ".join(f'"{t}"' for t in targets.split(","))
    (root / "kernels/models.toml").write_text("".join(
        f'[models.{name}]\nsource = "models/{source}"\ntargets = [{listed}]\n\n'
        for name, source in sources.items()))


def modules(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "build").rglob("*.vmfb"))}


def clean_build(root: Path, args: list[str]) -> tuple[float, harness.Run]:
    shutil.rmtree(root / "build", ignore_errors=True)
    for signatures in root.glob(".sconsign*"):
        signatures.unlink()
    started = time.monotonic()
    run = harness.scons(root, *args)
    seconds = time.monotonic() - started
    if not run.ok:
        raise SystemExit(run.failure())
    question = harness.scons(root, "--question", *[a for a in args if not a.startswith("-j")])
    if question.returncode != 0:
        raise SystemExit(f"--question after a build in {root}: {question.output[-2000:]}")
    return seconds, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--targets", default="llvm-cpu")
    parser.add_argument("--workers", default="2", help="comma-separated worker counts")
    parser.add_argument("--threads", type=int, default=1, help="threads of each worker")
    parser.add_argument("-j", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--corpus", default="", help="corpus models (bench/corpus.py), "
                        "comma-separated, instead of the demo")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-remote-"))
    build_args = [f"-j{args.j}", f"IREE_TARGETS={args.targets}"]
    local, remote = work / "local", work / "remote"
    corpus = [n for n in args.corpus.split(",") if n]
    checkout(local, corpus, args.targets)
    checkout(remote, corpus, args.targets)
    local_times = []
    for _ in range(args.repeat):
        seconds, _ = clean_build(local, build_args)
        local_times.append(seconds)
    expected = modules(local)
    base = statistics.median(local_times)
    print(f"{args.targets}, -j{args.j}, {len(expected)} modules; local clean build: "
          f"{base:.2f} s (median of {args.repeat})")
    print("| workers x threads | clean s | ratio | connecting s | steps sent | overhead per step "
          "ms, median / max | MB sent / back per build | modules |")
    print("|---|---|---|---|---|---|---|---|")
    for count in [int(n) for n in args.workers.split(",")]:
        workers = {f"w{n}": ["--nthreads", str(args.threads)] for n in range(1, count + 1)}
        with harness.LoopbackCluster(work / f"cluster-{count}", workers) as cluster:
            times, overheads, sent, back, steps, same = [], [], [], [], 0, True
            connecting = []
            for _ in range(args.repeat):
                seconds, run = clean_build(remote, [*build_args,
                                                    f"DASK_SCHEDULER={cluster.address}"])
                times.append(seconds)
                went = RAN_ON.findall(run.output)
                connecting += [float(s) for s in CONNECTED.findall(run.output)]
                steps = len(went)
                overheads += [(float(waited) - float(ran)) * 1000
                              for _, _, ran, waited, *_ in went]
                sent.append(sum(float(n) * UNIT[u] for *_, n, u, _, _ in went))
                back.append(sum(float(n) * UNIT[u] for *_, n, u in went))
                same = same and modules(remote) == expected
        median = statistics.median(times)
        print(f"| {count} x {args.threads} | {median:.2f} | {median / base:.2f} | "
              f"{statistics.median(connecting):.2f} | {steps} | "
              f"{statistics.median(overheads):.0f} / {max(overheads):.0f} | "
              f"{statistics.median(sent) / 1e6:.1f} / {statistics.median(back) / 1e6:.1f} | "
              f"{'identical' if same else 'DIFFERENT'} |", flush=True)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
