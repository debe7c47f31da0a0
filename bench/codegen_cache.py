"""Wall time of builds through the per-executable codegen cache, against a plain iree-compile, on the layers model.

    ./setup.sh python -m bench.codegen_cache [--targets cuda,vulkan,llvm-cpu] [--repeat N]

Per target, in a temporary repo holding only models/layers.mlir (41 distinct
executables; models/generate_layers.py) and its manifest, it times:
  (a) plain      iree-compile of the model with the build's options.flags
  (a') one thread  the same with --mlir-disable-threading, as the cached build
                 runs every iree-compile (-j runs them side by side): shows how
                 much of the gain is that flag alone
  (b) cold -jN   scons EXECUTABLE_CACHE=<target> with an empty cache, -j1 and -j2
  (c) cached     the module and its build folder removed, the cache kept: every
                 executable cached (a fresh checkout sharing the cache)
  (c') comment   after an edit of the model outside every executable (a comment):
                 the program is dumped again, the same, and nothing else runs
  (d) one layer  after giving one layer another activation (1 executable changes)
  (e) insert     after inserting a layer (1 new executable, the later ones renumbered)
  (f) no-op      scons again
(b)-(f) are whole scons runs (start-up included), -j2. Ratios are to (a); for
(d) and (e) also to a plain compile of the edited model. Medians of --repeat
runs. The goals: (d), (e) <= 0.35 of plain, (c) <= 0.25, (b) at -j2 <= 1.
"""
from __future__ import annotations

import argparse
import collections
import os
import shutil
import statistics
import tempfile
from pathlib import Path

from iree_kernels.core import toolchains
from models import generate_layers
from tests import harness

REPO = Path(__file__).resolve().parents[1]

MANIFEST = '[models.layers]\nsource = "models/layers.mlir"\ntargets = ["{target}"]\n'
ROWS = ("(a) plain", "(a') one thread", "(b) cold -j1", "(b) cold -j2", "(c) cached",
        "(c') comment", "(d) one layer", "(e) insert", "(f) no-op")
EDITED = {"(d) one layer": "plain, one layer", "(e) insert": "plain, insert"}


# A shared build cache would hold codegen entries across the runs measured as cold.
NO_SHARED_CACHE = {"IREE_KERNELS_CACHE_DIR": None}


def checked(run: harness.Run) -> harness.Run:
    if not run.ok:
        raise SystemExit(run.failure())
    return run


class Repo:
    def __init__(self, root: Path, target: str) -> None:
        self.root, self.target = root, target
        (root / "kernels").mkdir(parents=True)
        shutil.copy(REPO / "SConstruct", root)
        (root / "kernels/layers.toml").write_text(MANIFEST.format(target=target))
        self.model()

    def model(self, **variant) -> None:
        generate_layers.write(self.root / "models/layers.mlir",
                              generate_layers.layers(**variant), data=False)

    def scons(self, jobs: int = 2) -> tuple[float, int]:
        """Seconds, and how many executables were compiled into the cache."""
        build = checked(harness.scons(self.root, f"-j{jobs}", f"IREE_TARGETS={self.target}",
                                      f"EXECUTABLE_CACHE={self.target}",
                                      f"build/{self.target}/layers.vmfb", env=NO_SHARED_CACHE))
        return build.seconds, len(build.ran("CODEGEN"))

    def plain(self, *flags: str, **variant) -> float:
        self.model(**variant)
        options = f"build/{self.target}/layers/options.flags"
        if not (self.root / options).exists():
            checked(harness.scons(self.root, f"IREE_TARGETS={self.target}", options,
                                  env=NO_SHARED_CACHE))
        elapsed = checked(harness.run([toolchains.iree_compile(), "models/layers.mlir",
                                       f"@{options}", *flags, "-o", os.devnull], self.root,
                                      env=NO_SHARED_CACHE)).seconds
        self.model()
        return elapsed

    def reset(self) -> None:
        """An empty build folder and cache, SCons's records gone."""
        shutil.rmtree(self.root / "build", ignore_errors=True)
        (self.root / ".sconsign.dblite").unlink(missing_ok=True)

    def forget_module(self) -> None:
        """The module and its build folder removed; the codegen cache kept."""
        shutil.rmtree(self.root / "build" / self.target / "layers")
        (self.root / "build" / self.target / "layers.vmfb").unlink()


def measure_once(target: str) -> dict[str, tuple[float, int]]:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Repo(Path(tmp) / "repo", target)
        times = {"(a) plain": (repo.plain(), 0),
                 "(a') one thread": (repo.plain("--mlir-disable-threading"), 0),
                 "plain, one layer": (repo.plain(change=7), 0),
                 "plain, insert": (repo.plain(insert=10), 0)}
        repo.reset()
        times["(b) cold -j1"] = repo.scons(jobs=1)
        repo.reset()
        times["(b) cold -j2"] = repo.scons()
        repo.forget_module()
        times["(c) cached"] = repo.scons()
        with open(repo.root / "models/layers.mlir", "a") as model:
            model.write("// an edit outside every executable\n")
        times["(c') comment"] = repo.scons()
        repo.model(change=7)
        times["(d) one layer"] = repo.scons()
        repo.model(insert=10)
        times["(e) insert"] = repo.scons()
        times["(f) no-op"] = repo.scons()
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="cuda,vulkan,llvm-cpu")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    targets = args.targets.split(",")
    runs = {t: collections.defaultdict(list) for t in targets}
    for _ in range(args.repeat):
        for target in targets:
            for row, value in measure_once(target).items():
                runs[target][row].append(value)
    median = {t: {row: (statistics.median(v[0] for v in values), values[-1][1])
                  for row, values in rows.items()} for t, rows in runs.items()}
    print(f"layers model (41 executables), {os.cpu_count()} cores, median of {args.repeat}; "
          "seconds, (ratio to (a)), [executables compiled]")
    print(f"{'':<16}" + "".join(f"{t:>30}" for t in targets))
    for row in ROWS:
        print(f"{row:<16}" + "".join(f"{_cell(median[t], row):>30}" for t in targets))
    for row, plain in EDITED.items():
        print(f"{row + ' / plain of the edited model':<16}")
        print(f"{'':<16}" + "".join(
            f"{median[t][row][0] / median[t][plain][0]:>29.2f}x" for t in targets))


def _cell(times: dict, row: str) -> str:
    seconds, compiled = times[row]
    ratio = seconds / times["(a) plain"][0]
    extra = f" [{compiled}]" if not row.startswith("(a") else ""
    return f"{seconds:.2f} s ({ratio:.2f}){extra}"


if __name__ == "__main__":
    main()
