"""Wall time of a fresh checkout's build against a warm remote cache, beside a cold build and a warm local cache.

    ./setup.sh python -m bench.remote_cache [--models demo,densenet121] [-j N] [--repeat N]
        [--demo-targets llvm-cpu,vulkan,cuda] [--model-target llvm-cpu]

The server is a real one: nginx with WebDAV PUT on 127.0.0.1
(tests/cache_server.py), so requests go through the loopback's TCP stack and
nginx, not a folder; a server across a network adds its latency per request
(3 requests per file: its action result, its content, its digest record).
Models: ``demo`` is this repo's own kernels/ and models/ (every model and
target of kernels/*.toml, --demo-targets); ``densenet121`` is the onnx
package's densenet121 (models/fetch_onnx_models.py), imported and compiled for
--model-target. Each row is one whole ``scons -jN`` in a new checkout at a new
path (start-up included), the median of --repeat:
  cold          no cache at all
  cold+upload   no entry anywhere, uploading everything to an empty remote cache
  warm local    CACHE_DIR filled by another checkout
  warm remote   REMOTE_CACHE_URL filled by another checkout, nothing local
After every row ``scons --question`` must say up to date, and the modules of
every row must be byte for byte those of the cold build.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from tests import harness
from tests.cache_server import CacheServer

REPO = Path(__file__).resolve().parents[1]

ROWS = ("cold", "cold+upload", "warm local", "warm remote")
TIMEOUT = 3600


def run(argv, cwd: Path) -> tuple[float, str]:
    env = {k: None for k in os.environ if k.startswith(("IREE_KERNELS_CACHE", "IREE_KERNELS_REMOTE"))}
    result = harness.run(argv, cwd, env=env, timeout=TIMEOUT)
    if not result.ok:
        raise SystemExit(result.failure(tail=3000))
    return result.seconds, result.output


def demo_checkout(root: Path, targets: str) -> list[str]:
    shutil.copytree(REPO / "kernels", root / "kernels")
    shutil.copytree(REPO / "models", root / "models", ignore=shutil.ignore_patterns("*.py"))
    shutil.copy(REPO / "SConstruct", root)
    return [f"IREE_TARGETS={targets}"]


def densenet_checkout(root: Path, target: str) -> list[str]:
    (root / "kernels").mkdir(parents=True)
    (root / "models").mkdir()
    shutil.copy(REPO / "SConstruct", root)
    shutil.copy(REPO / "models/fetch_onnx_models.py", root / "models")
    run([sys.executable, "models/fetch_onnx_models.py", "densenet121"], root)
    (root / "models/fetch_onnx_models.py").unlink()
    (root / "kernels/bench.toml").write_text(
        f'[models.densenet121]\nsource = "models/densenet121.onnx"\ntargets = ["{target}"]\n')
    return [f"IREE_TARGETS={target}"]


def modules(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / "build").rglob("*.vmfb"))}


def measure_once(model: str, args, work: Path) -> dict[str, float]:
    count = iter(range(1000))

    def checkout() -> tuple[Path, list[str]]:
        root = work / f"checkout-{next(count)}" / "repo"      # a new path each time
        root.parent.mkdir(parents=True)
        variables = (demo_checkout(root, args.demo_targets) if model == "demo"
                     else densenet_checkout(root, args.model_target))
        return root, variables

    def scons(root: Path, variables: list[str], *extra: str) -> float:
        elapsed, _ = run(harness.scons_argv(f"-j{args.jobs}", *variables, *extra), root)
        run(harness.scons_argv("--question", "--debug=explain", *variables, *extra), root)
        return elapsed

    times, reference = {}, None
    with CacheServer(work / "server") as server:
        remote = (f"REMOTE_CACHE_URL={server.url}",)
        local = (f"CACHE_DIR={work / 'local-cache'}",)
        for row, extra, warm_first in [("cold", (), False), ("cold+upload", remote, False),
                                       ("warm local", local, True),
                                       ("warm remote", remote, False)]:
            if warm_first:
                scons(*checkout(), *extra)
            root, variables = checkout()
            times[row] = scons(root, variables, *extra)
            built = modules(root)
            reference = reference or built
            if built != reference:
                raise SystemExit(f"{row}: the modules differ from the cold build's")
        times["requests"] = len(server.requests())
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--models", default="demo,densenet121")
    parser.add_argument("--demo-targets", default="llvm-cpu,vulkan,cuda")
    parser.add_argument("--model-target", default="llvm-cpu")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    print(f"scons -j{args.jobs}, {len(os.sched_getaffinity(0))} cores; wall s (ratio to cold)")
    print(f"| model | {' | '.join(ROWS)} |")
    print("|---" * (len(ROWS) + 1) + "|")
    for model in args.models.split(","):
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="iree-remote-bench-") as work:
                runs.append(measure_once(model, args, Path(work)))
        median = {row: statistics.median(r[row] for r in runs) for row in ROWS}
        name = model if model == "demo" else f"{model} {args.model_target}"
        if model == "demo":
            name += f" ({args.demo_targets})"
        cells = [f"{median['cold']:.1f}"] + [f"{median[row]:.1f} ({median[row] / median['cold']:.2f})"
                                             for row in ROWS[1:]]
        print(f"| {name} | {' | '.join(cells)} |", flush=True)


if __name__ == "__main__":
    main()
