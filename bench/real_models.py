"""Wall time of this repo's builds of real networks, against a plain iree-compile of the same model.

    ./setup.sh python -m bench.real_models [--models densenet121,resnet50,layers]
        [--targets vulkan,llvm-cpu,cuda] [--cache on,off] [--relink off,on]
        [--kernels native,mlir] [--repeat N] [-j N]

Models: ``densenet121`` and ``resnet50`` are the onnx package's backend test
models (``onnx/backend/test/data/light/light_*.onnx``, real graphs, splat
weights), imported with ``iree-import-onnx --opset-version 17``;
``onnx_<name>`` is the same graph with dense seeded weights (bench/corpus.py:
``onnx_resnet50`` 102 MB, ``onnx_inception_v2`` 45 MB, ``onnx_squeezenet``
5 MB), which is what users' models weigh; ``torch_layers`` is the corpus's
torch export of four Linear+ReLU layers of one shape (one executable, several
dispatch sites) at ``--scale`` (16: 2048 wide, 67 MB of weights); ``layers``
is the synthetic 41-executable model (models/generate_layers.py), ``layers<N>`` the same
generator's N layers (2N + 1 executables: ``layers260`` has 521). IREE 3.13's
CUDA codegen fails on convolutions of the ONNX nets, so CUDA is measured on
``layers`` and the torch models only.

Per model, target and cache setting (EXECUTABLE_CACHE=<target> or 0), in a
temporary repo holding the model, two scaffolded kernels (one in the target's
language, substituted as an object or wrapped, and one dumped executable
substituted as MLIR source) and their manifest entries, each row is one whole
``scons -jN`` run (start-up included), the median of --repeat:
  plain       iree-compile of the model with the build's options.flags
  clean       empty build folder and caches
  kernel      one line of the object/wrapped kernel changed
  source      one line of the MLIR source kernel changed
  one op      one ReLU of the model made a sigmoid (layers: one layer's activation)
  fresh       another checkout of the same files, sharing the codegen cache
              folder (CODEGEN_CACHE_DIR; cache on only)
  fresh+scons another checkout sharing CACHE_DIR (SCons's cache: modules too)
  no-op       scons again
``--relink on`` builds with RELINK=yes (kernel edits of MLIR source kernels
replace one binary in the unlinked module; a row where a kernel was compiled
into the module instead is marked ``*``). ``--kernels mlir`` scaffolds only
the MLIR source kernel, so a model of one executable gets a source row.
The ratio is to plain (for 'one op': to a plain compile of the edited model).
Where the kernel language's compiler is missing (clang, glslang, nvcc), the
kernel row is left out. $IREE_KERNELS_BENCH_MODELS may name a folder of
models imported elsewhere (<name>.mlir), for machines without the onnx package
(bench/dense_resources.py carries dense ones there).
After every row, ``scons --question`` must say up to date. The phases of a
plain compile (front end; codegen; host and serialization) are printed too.
Goals (issue 14): clean <= 1.0, kernel and source <= 0.15, one op <= 0.65,
fresh <= 0.6, no-op <= 0.3 s.
"""
from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench import kernel_edits
from iree_kernels.core import toolchains
from iree_kernels.importers import torch_importer
from iree_kernels.ir.program import Program
from models import generate_layers
from tests import harness

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

LANGUAGE = {"vulkan": "glsl", "cuda": "cuda", "llvm-cpu": "c"}
COMPILER = {"glsl": toolchains.on_path("glslangValidator") and toolchains.on_path("spirv-val"),
            "cuda": toolchains.nvcc(), "c": toolchains.on_path("clang")}
ROWS = ("plain", "clean", "kernel", "source", "one op", "fresh", "fresh+scons", "no-op")
PHASES = ("front end", "codegen", "host")
# One changed line per kernel language; each edit puts a new number in it.
EDITS = {
    ".glsl": ("// TODO: compute output i", "if (i == {n}u) {{ return; }}"),
    ".cu": ("// TODO: compute output i", "if (i == {n}u) {{ continue; }}"),
    ".c": ("// TODO: compute this workgroup's share of the outputs from the inputs.",
           "{{ volatile int edit = {n}; (void)edit; }}"),
}
TIMEOUT = 1800
# What a user's scons runs with: no shared cache, and Python writes its bytecode (this
# machine sets PYTHONDONTWRITEBYTECODE, which makes every start compile the tools: +0.1 s).
USER_ENVIRONMENT = {"IREE_KERNELS_CACHE_DIR": "", "PYTHONDONTWRITEBYTECODE": None}
SCALE = 16.0            # torch models' width multiplier (--scale)
KERNELS = ("native", "mlir")    # the kernels scaffolded (--kernels)


def run(argv, cwd: Path, env: dict | None = None, check: bool = True) -> tuple[float, str, int]:
    result = harness.run(argv, cwd, env=env, timeout=TIMEOUT)
    if check and not result.ok:
        raise SystemExit(result.failure(tail=3000))
    return result.seconds, result.output, result.returncode


def model_text(name: str, work: Path) -> str:
    if name.startswith("layers"):
        return generate_layers.model_mlir(generate_layers.layers(count=_layer_count(name)))
    imported = work / f"{name}.mlir"
    carried = os.environ.get("IREE_KERNELS_BENCH_MODELS")      # imported elsewhere
    if carried and (Path(carried) / f"{name}.mlir").exists():
        return (Path(carried) / f"{name}.mlir").read_text()
    if not imported.exists() and name.startswith("torch_"):
        from bench import corpus
        entry = corpus.write_torch(work, name, seed=0, scale=SCALE)
        if entry.source.endswith(".pt2"):           # imported as the build imports it
            run([sys.executable, "-P", torch_importer.SCRIPT, work / entry.source, "-o", imported],
                work)
        return imported.read_text()
    if not imported.exists():
        import onnx
        source = Path(onnx.__file__).parent / f"backend/test/data/light/light_{name}.onnx"
        if name.startswith("onnx_"):                        # dense weights: the corpus's
            from bench import corpus
            source = work / corpus.write_onnx(work, name.removeprefix("onnx_"), seed=0).source
        run([BIN / "iree-import-onnx", source, "--opset-version", "17", "-o", imported], work)
    return imported.read_text()


def _layer_count(name: str) -> int:
    """``layers``: the 20 layers of models/layers.mlir; ``layers<N>``: N layers (2N + 1 executables)."""
    count = name.removeprefix("layers")
    if count and not count.isdigit():
        raise SystemExit(f"bench: unknown model {name} (layers or layers<N>)")
    return int(count) if count else generate_layers.LAYERS


def one_op_changed(name: str, text: str) -> str | None:
    """The model with one operation changed: the middle ReLU a sigmoid (layers: layer 7 leaky).

    None for the torch models: every layer of torch_layers is one executable's
    dispatch site, so any op changed there changes the kernel's executable.
    """
    if name.startswith("layers"):
        return generate_layers.model_mlir(generate_layers.layers(change=7,
                                                                 count=_layer_count(name)))
    if name.startswith("torch_"):
        return None
    relus = [m.start() for m in re.finditer(r'"onnx\.Relu"', text)]
    at = relus[len(relus) // 2]
    return text[:at] + '"onnx.Sigmoid"' + text[at + len('"onnx.Relu"'):]


class Repo:
    def __init__(self, root: Path, model: str, target: str, cache: bool, jobs: int,
                 shared: Path, relink: bool = False, kernels: tuple[str, ...] = KERNELS) -> None:
        self.root, self.model, self.target, self.jobs = root, model, target, jobs
        self.variables = [f"IREE_TARGETS={target}",
                          f"EXECUTABLE_CACHE={target if cache else 0}",
                          f"RELINK={'yes' if relink else 'no'}"]
        self.kernels = kernels
        self.compiled_not_relinked = False
        self.shared = {"CACHE_DIR": str(shared)}
        self.edits = 0

    def create(self, text: str) -> None:
        (self.root / "kernels").mkdir(parents=True)
        (self.root / "models").mkdir()
        shutil.copy(REPO / "SConstruct", self.root)
        (self.root / f"models/{self.model}.mlir").write_text(text)
        (self.root / "kernels/bench.toml").write_text(
            f'[models.{self.model}]\nsource = "models/{self.model}.mlir"\n'
            f'targets = ["{self.target}"]\n')

    def copy_to(self, root: Path) -> "Repo":
        twin = Repo.__new__(Repo)
        twin.__dict__.update(self.__dict__, root=root)
        shutil.copytree(self.root, root, ignore=shutil.ignore_patterns(
            "build", ".sconsign.dblite"))
        return twin

    def scons(self, *args: str, shared: dict | None = None, check: bool = True):
        """scons with the build variables; ``shared``: the cache variables, if not self.shared."""
        variables = {**self.shared, **(shared or {})}
        return run(harness.scons_argv(f"-j{self.jobs}", *self.variables,
                                      *(f"{k}={v}" for k, v in variables.items()), *args),
                   self.root, USER_ENVIRONMENT, check)

    def timed(self, shared: dict | None = None) -> float:
        elapsed, out, _ = self.scons(shared=shared)
        self.compiled_not_relinked = "not relinked" in out
        _, out, status = self.scons("--question", shared=shared, check=False)
        if status != 0:
            raise SystemExit(f"scons --question says not up to date after a build:\n{out}")
        return elapsed

    def executables(self) -> list[str]:
        program = f"build/{self.target}/{self.model}/executables.mlir"
        self.scons(program, shared={"CACHE_DIR": ""})
        with Program((self.root / program).read_text()) as parsed:
            return parsed.names()

    def scaffold(self) -> tuple[Path | None, Path | None]:
        """A kernel in the target's language (None: no compiler of it here) and an MLIR source kernel.

        Each substitutes another executable; a model of one executable gets no source kernel.
        """
        names = self.executables()
        made = []
        language = LANGUAGE[self.target]
        picks = [(language, names[len(names) // 2])] \
            if COMPILER[language] and "native" in self.kernels else []
        others = [n for n in names[len(names) // 3:] + names if n not in dict(picks).values()]
        if others and "mlir" in self.kernels:                 # one executable: no source row
            picks.append(("mlir", others[0]))
        for language, name in picks:
            before = set(self.root.glob("kernels/**/*.*"))
            self.scons("scaffold", f"SCAFFOLD={self.model}/{self.target}/{name}",
                       f"LANGUAGE={language}", "SCAFFOLD_MANIFEST=kernels/scaffolded.toml",
                       shared={"CACHE_DIR": ""})
            made += [p for p in set(self.root.glob("kernels/**/*.*")) - before
                     if p.suffix != ".toml"]
        kernel = next((p for p in made if p.suffix != ".mlir"), None)
        source = next((p for p in made if p.suffix == ".mlir"), None)
        return kernel, source

    def edit(self, kernel: Path) -> None:
        """Add one line to ``kernel`` that changes what it compiles to."""
        self.edits += 1
        text = kernel.read_text()
        if kernel.suffix == ".mlir":
            text = kernel_edits.edit_mlir_kernel(text, self.edits)
        else:
            marker, line = EDITS[kernel.suffix]
            text = text.replace(marker, line.format(n=self.edits) + "\n    " + marker, 1)
        if text == kernel.read_text():
            raise SystemExit(f"bench: no line to edit in {kernel}")
        kernel.write_text(text)

    def reset(self) -> None:
        shutil.rmtree(self.root / "build", ignore_errors=True)
        (self.root / ".sconsign.dblite").unlink(missing_ok=True)


def plain(repo: Repo, text: str, work: Path) -> dict[str, float]:
    """Seconds of a plain iree-compile of ``text`` and of its phases."""
    options = repo.root / f"build/{repo.target}/{repo.model}/options.flags"
    model = work / f"{repo.model}.mlir"
    model.write_text(text)
    compiler = toolchains.iree_compile()
    times = {"plain": run([compiler, model, f"@{options}", "-o", os.devnull], work)[0]}
    sources, targets = work / "sources.mlir", work / "targets.mlir"
    times["front end"] = run([compiler, model, f"@{options}", "--compile-to=executable-sources",
                              "-o", sources], work)[0]
    times["codegen"] = run([compiler, sources, f"@{options}", "--compile-from=executable-sources",
                            "--compile-to=executable-targets", "-o", targets], work)[0]
    times["host"] = run([compiler, targets, f"@{options}", "--compile-from=executable-targets",
                         "-o", os.devnull], work)[0]
    return times


def measure_once(model: str, target: str, cache: bool, relink: bool, jobs: int, work: Path,
                 kernels: tuple[str, ...] = KERNELS) -> dict:
    text = model_text(model, work)
    with tempfile.TemporaryDirectory(dir=work) as tmp:
        tmp = Path(tmp)
        shared = tmp / "shared-cache"
        repo = Repo(tmp / "repo", model, target, cache, jobs, shared, relink, kernels)
        repo.create(text)
        kernel, source = repo.scaffold()
        times = plain(repo, text, tmp)
        changed = one_op_changed(model, text)
        if changed:
            times["plain, one op"] = plain(repo, changed, tmp)["plain"]
        repo.reset()
        times["clean"] = repo.timed()
        if kernel:
            repo.edit(kernel)
            times["kernel"] = repo.timed()
        if source:
            repo.edit(source)
            times["source"] = repo.timed()
            times["source compiled"] = float(repo.compiled_not_relinked)
        if changed:
            (repo.root / f"models/{model}.mlir").write_text(changed)
            times["one op"] = repo.timed()
        if cache:
            fresh = repo.copy_to(tmp / "fresh")
            times["fresh"] = fresh.timed(shared={"CACHE_DIR": "",
                                                 "CODEGEN_CACHE_DIR": str(shared / "codegen")})
        times["fresh+scons"] = repo.copy_to(tmp / "fresh-scons").timed()
        times["no-op"] = repo.timed()
        return times


def main() -> None:
    global SCALE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default="densenet121,resnet50,layers")
    parser.add_argument("--targets", default="vulkan,llvm-cpu,cuda")
    parser.add_argument("--cache", default="on,off")
    parser.add_argument("--relink", default="off")
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--scale", type=float, default=SCALE,
                        help="width multiplier of the torch models (corpus.py --scale)")
    parser.add_argument("-j", "--jobs", type=int, default=len(os.sched_getaffinity(0)))
    args = parser.parse_args()
    SCALE = args.scale
    configurations = [(m, t, c == "on", r == "on") for m in args.models.split(",")
                      for t in args.targets.split(",") for c in args.cache.split(",")
                      for r in args.relink.split(",")
                      if t != "cuda" or m.startswith(("layers", "torch_"))]
    kernels = tuple(args.kernels.split(","))
    print(f"{len(os.sched_getaffinity(0))} cores, scons -j{args.jobs}, median of {args.repeat}; "
          "seconds (ratio to plain)")
    print(f"{'model':<12}{'target':<9}{'cache':<6}{'relink':<7}"
          + "".join(f"{r:>14}" for r in ROWS)
          + "".join(f"{p:>11}" for p in PHASES), flush=True)
    with tempfile.TemporaryDirectory(prefix="iree-kernels-bench-") as work:
        for configuration in configurations:
            runs = collections.defaultdict(list)
            for n in range(args.repeat):
                once = measure_once(*configuration, args.jobs, Path(work), kernels)
                for row, seconds in once.items():
                    runs[row].append(seconds)
                if args.repeat > 1:     # each run as it ends: a run cut short still says something
                    print(f"# run {n + 1}: {_row(configuration, once)}", flush=True)
            print(_row(configuration, {row: statistics.median(v) for row, v in runs.items()}),
                  flush=True)


def _row(configuration, median: dict[str, float]) -> str:
    model, target, cache, relink = configuration
    cells = []
    for row in ROWS:
        if row not in median:
            cells.append(f"{'-':>14}")
            continue
        base = median["plain, one op" if row == "one op" else "plain"]
        ratio = "" if row == "plain" else f" ({median[row] / base:.2f})"
        if row == "source" and median.get("source compiled"):
            ratio += "*"
        cells.append(f"{median[row]:.2f}{ratio}".rjust(14))
    phases = [f"{median[p]:.2f}".rjust(11) for p in PHASES]
    return (f"{model:<12}{target:<9}{'on' if cache else 'off':<6}"
            f"{'on' if relink else 'off':<7}" + "".join(cells)
            + "".join(phases))

if __name__ == "__main__":
    main()
