"""A no-op's wall time for two versions of this repo's tools, interleaved, on one model.

    ./setup.sh python -m bench.no_op OLD_SITE_SCONS [NEW_SITE_SCONS] --model models/x.onnx
        [--repeat 9] [--target llvm-cpu]

A repo holding the model (no kernels) is built once by each version (each keeps its own build
folder); then, ``--repeat`` times and alternating, the build folder of one version is put in
place and ``scons -Q`` is run twice: the first settles what a copy changes (times), the second
is timed. Prints the median and every run. The environment is this one: where it sets
PYTHONDONTWRITEBYTECODE, a checkout whose library was never compiled pays its compile at
every start (``git worktree add`` makes such a checkout of an older commit).
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCONS = Path(sys.executable).with_name("scons")


def scons(repo: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([SCONS, "-Q", f"--site-dir={site}"], cwd=repo, capture_output=True,
                          text=True, timeout=1800)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path, nargs="?", default=REPO / "site_scons")
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--target", default="llvm-cpu")
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    sites = {"old": args.old.resolve(), "new": args.new.resolve()}
    with tempfile.TemporaryDirectory() as work:
        repo = Path(work) / "repo"
        (repo / "models").mkdir(parents=True)
        (repo / "kernels").mkdir()
        shutil.copy(REPO / "SConstruct", repo)
        shutil.copy(args.model, repo / "models" / args.model.name)
        (repo / "kernels/k.toml").write_text(
            f'[models.m]\nsource = "models/{args.model.name}"\ntargets = ["{args.target}"]\n')
        for name, site in sites.items():
            shutil.rmtree(repo / "build", ignore_errors=True)
            built = scons(repo, site)
            if built.returncode:
                sys.exit(f"{name}: the build failed:\n{built.stdout}{built.stderr}")
            shutil.copytree(repo / "build", Path(work) / f"build-{name}", symlinks=True)
        times: dict[str, list[float]] = {name: [] for name in sites}
        for _ in range(args.repeat):
            for name, site in sites.items():
                shutil.rmtree(repo / "build")
                shutil.copytree(Path(work) / f"build-{name}", repo / "build", symlinks=True)
                scons(repo, site)
                start = time.perf_counter()
                again = scons(repo, site)
                times[name].append(time.perf_counter() - start)
                if "up to date" not in again.stdout:
                    sys.exit(f"{name}: not a no-op:\n{again.stdout}{again.stderr}")
    print(f"no-op of {args.model.name} ({args.model.stat().st_size / 1e6:.1f} MB) on "
          f"{args.target}, median of {args.repeat}, interleaved:")
    for name, site in sites.items():
        print(f"  {name} {statistics.median(times[name]):.3f} s  ({site}; "
              f"{' '.join(f'{t:.2f}' for t in times[name])})")


if __name__ == "__main__":
    main()
