"""How the build scales with the number of kernels: clean, no-op and one-kernel-touch builds of synthetic repos.

    ./setup.sh python -m bench.scale [--sizes 10,100,1000] [--repeat 5] [--jobs 2]
                                     [--keep DIR] [--profile] [--one-manifest] [--site-dir DIR]

Takes about 2 minutes on 2 cores (the clean build of N=1000 about 40 s).

For each size N a repo is generated in a temporary folder (with --keep, in
DIR/n<N>, left there and reused by a later run): M = max(1, N // --per-model)
models, model i a function of independent elementwise and row-reduction ops,
each of a shape no other op of the model has, so that IREE keeps every op as
an executable of its own (it merges identical dispatches). Every executable is
substituted, for llvm-cpu in source mode, by a kernel that is the executable's
source as dumped with the build's own options.flags plus a comment naming it,
so every kernel file is real and different. Each model has expected outputs,
so the check declarations (and the device query they make) are part of the
graph read at every build, as in a real repo. Manifests: one a model, or with
--one-manifest all in one file.

Per N it prints: the nodes of the graph, a clean build, a no-op build (median
of --repeat) with and without --implicit-cache, a build after editing one
kernel (median of --repeat, each editing another kernel) with the exact steps
it ran, the scons process's peak RSS, and the floor: the same dependency graph
with `touch` rules as a Makefile, a ninja file and a plain SConstruct (Command
nodes only), their no-op times. Then the marginal cost per kernel between
sizes, to see whether growth is linear.

--profile profiles the no-op build of the largest size (scons --profile, -j1)
and prints where the time goes: reading the SConstruct (our declarations)
versus SCons's up-to-date walk, our functions by cumulative time, subprocesses
run, and SCons's own hot spots. Times under the profiler are about twice the
real ones. The builds use a copy of site_scons taken at the start (others may
be editing it); --site-dir gives another one, to measure a proposed change
without making it.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests import harness

REPO = Path(__file__).resolve().parents[1]

PYCACHE = str(Path(tempfile.gettempdir()) / "scale-pycache")
TARGET = "llvm-cpu"
COMPILE_STEPS = ("IREE", "FRONTEND", "PTX", "SPIRV")               # steps that run a compiler
TIMEOUT = 3600                                                     # one scons run, at the largest N

# Runs SCons in this process and writes its own peak RSS (KiB) where
# $SCALE_RSS_FILE says: children (iree-compile) are not counted.
SCONS_WITH_RSS = """\
import atexit, os, resource, sys
def _write_rss():
    with open(os.environ["SCALE_RSS_FILE"], "w") as f:
        f.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
atexit.register(_write_rss)
sys.argv[0] = "scons"
from SCons.Script.Main import main
main()
"""


# ---------------------------------------------------------------------------
# The synthetic repo


@dataclass
class Model:
    name: str
    ops: int                                   # independent ops, so executables

    def shapes(self, index: int) -> list[tuple[int, int]]:
        # Rows differ between ops of one model, columns between models: every
        # op of a model has a shape of its own, and models differ too.
        return [(2 + k, 3 + 2 * k + index) for k in range(self.ops)]


@dataclass
class Repo:
    root: Path
    models: list[Model]
    kernels: list[str] = field(default_factory=list)        # repo-relative paths

    @property
    def size(self) -> int:
        return len(self.kernels)


def model_source(index: int, model: Model) -> str:
    """A function of independent ops, even ones elementwise, odd ones row reductions."""
    args, results, body = [], [], []
    for k, (r, c) in enumerate(model.shapes(index)):
        t = f"tensor<{r}x{c}xf32>"
        args += [f"%a{k}: {t}", f"%b{k}: {t}"]
        if k % 2 == 0:
            results.append((f"%r{k}", t))
            body.append(
                f"  %e{k} = tensor.empty() : {t}\n"
                f"  %r{k} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
                f"affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = "
                f"[\"parallel\", \"parallel\"]}} ins(%a{k}, %b{k} : {t}, {t}) outs(%e{k} : {t}) {{\n"
                f"  ^bb0(%x: f32, %y: f32, %o: f32):\n"
                f"    %m = arith.mulf %x, %y : f32\n"
                f"    %s = arith.addf %m, %x : f32\n"
                f"    linalg.yield %s : f32\n"
                f"  }} -> {t}")
        else:
            row = f"tensor<{r}xf32>"
            results.append((f"%r{k}", row))
            body.append(
                f"  %e{k} = tensor.empty() : {row}\n"
                f"  %f{k} = linalg.fill ins(%zero : f32) outs(%e{k} : {row}) -> {row}\n"
                f"  %r{k} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
                f"affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>], iterator_types = "
                f"[\"parallel\", \"reduction\"]}} ins(%a{k}, %b{k} : {t}, {t}) outs(%f{k} : {row}) {{\n"
                f"  ^bb0(%x: f32, %y: f32, %o: f32):\n"
                f"    %m = arith.subf %x, %y : f32\n"
                f"    %s = arith.addf %m, %o : f32\n"
                f"    linalg.yield %s : f32\n"
                f"  }} -> {row}")
    types = ", ".join(t for _, t in results)
    return (f"// Synthetic model {model.name}: {model.ops} independent ops of distinct shapes.\n"
            f"func.func @main({', '.join(args)}) -> ({types}) {{\n"
            f"  %zero = arith.constant 0.0 : f32\n" + "\n".join(body) + "\n"
            f"  return {', '.join(v for v, _ in results)} : {types}\n}}\n")


def expected_outputs(index: int, model: Model) -> str:
    """All-ones inputs: a*b+a = 2 elementwise, sum(a-b) = 0 per row."""
    inputs, outputs = [], []
    for k, (r, c) in enumerate(model.shapes(index)):
        inputs += [f"{r}x{c}xf32=1"] * 2
        outputs.append(f"{r}x{c}xf32=2" if k % 2 == 0 else f"{r}xf32=0")
    return (f"[[case]]\nfunction = \"main\"\ninputs = {json.dumps(inputs)}\n"
            f"outputs = {json.dumps(outputs)}\n")


def model_manifest(model: Model, substitutions: list[tuple[str, str]]) -> str:
    text = (f"# Synthetic: {model.name} and its kernels.\n\n[models.{model.name}]\n"
            f"source = \"models/{model.name}.mlir\"\ntargets = [\"{TARGET}\"]\n")
    for executable, file in substitutions:
        text += (f"\n[[substitutions]]\nmodel = \"{model.name}\"\ntarget = \"{TARGET}\"\n"
                 f"executable = \"{executable}\"\nfile = \"{file}\"\n")
    return text


def plan_models(kernels: int, per_model: int) -> list[Model]:
    count = max(1, kernels // per_model)
    share, extra = divmod(kernels, count)
    return [Model(f"m{i:04d}", share + (i < extra)) for i in range(count)]


def generate(root: Path, kernels: int, per_model: int, jobs: int, site_dir: Path,
             one_manifest: bool = False) -> Repo:
    """Write the repo: models, expected outputs, kernels dumped and edited, manifests.

    One manifest per model (kernels/<model>.toml), or with ``one_manifest``
    all of them in kernels/all.toml.
    """
    repo = Repo(root, plan_models(kernels, per_model))
    root.mkdir(parents=True)
    shutil.copy(REPO / "SConstruct", root)
    for i, model in enumerate(repo.models):
        write(root / f"models/{model.name}.mlir", model_source(i, model))
        write(root / f"models/{model.name}.expected.toml", expected_outputs(i, model))
        write(root / f"kernels/{model.name}.toml", model_manifest(model, []))
    # Every model has the same options, so one options.flags serves all dumps.
    first = repo.models[0].name
    options = root / f"build/{TARGET}/{first}/options.flags"
    scons(root, site_dir, options.relative_to(root).as_posix())
    dumps = Path(tempfile.mkdtemp(prefix="dumps-", dir=root))
    compiler = iree_compile(site_dir)

    def dump(model: Model) -> list[str]:
        out = dumps / model.name
        subprocess.run([compiler, f"models/{model.name}.mlir", f"@{options}",
                        "--compile-to=executable-sources",
                        f"--iree-hal-dump-executable-sources-to={out}", "-o", os.devnull],
                       cwd=root, check=True, capture_output=True)
        return sorted(p.name for p in out.glob("module_*.mlir"))

    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        dumped = list(pool.map(dump, repo.models))
    manifests = []
    for model, files in zip(repo.models, dumped):
        if len(files) != model.ops:
            raise SystemExit(f"{model.name}: IREE made {len(files)} executables of "
                             f"{model.ops} ops; the generator assumes one each")
        substitutions = []
        for name in files:
            executable = name.removeprefix("module_").removesuffix(".mlir")
            kernel = f"kernels/{TARGET}/{model.name}/{executable}.mlir"
            write(root / kernel, f"// Kernel for {model.name} {executable}: an edited copy of "
                  "its dumped source.\n" + (dumps / model.name / name).read_text())
            substitutions.append((executable, kernel))
            repo.kernels.append(kernel)
        manifests.append(model_manifest(model, substitutions))
        if one_manifest:
            (root / f"kernels/{model.name}.toml").unlink()
        else:
            write(root / f"kernels/{model.name}.toml", manifests[-1])
    if one_manifest:
        write(root / "kernels/all.toml", "\n".join(manifests))
    shutil.rmtree(dumps)
    shutil.rmtree(root / "build")
    (root / ".sconsign.dblite").unlink()
    (root / "repo.json").write_text(json.dumps(
        {"models": [[m.name, m.ops] for m in repo.models], "kernels": repo.kernels}))
    return repo


def reopen(root: Path) -> Repo:
    data = json.loads((root / "repo.json").read_text())
    return Repo(root, [Model(n, k) for n, k in data["models"]], data["kernels"])


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def iree_compile(site_dir: Path) -> str:
    if str(site_dir) not in sys.path:
        sys.path.insert(0, str(site_dir))
    from iree_kernels.core import toolchains
    return toolchains.iree_compile() or "iree-compile"


# ---------------------------------------------------------------------------
# Running builds


@dataclass
class Run:
    wall: float
    steps: list[tuple[str, str]]
    rss_mib: float | None
    stdout: str

    def count(self, kinds=COMPILE_STEPS) -> int:
        return sum(1 for kind, _ in self.steps if kind in kinds)

    def describe(self) -> str:
        counted = collections.Counter(kind for kind, _ in self.steps)
        return " ".join(f"{kind}x{n}" for kind, n in sorted(counted.items())) or "none"


def scons(root: Path, site_dir: Path, *args: str) -> Run:
    """One scons run in ``root``: its wall time, the steps it printed, its own peak RSS."""
    with tempfile.NamedTemporaryFile(prefix="rss-") as rss:
        # Bytecode is cached as in a user's builds, but outside the checkout.
        env = {"SCALE_RSS_FILE": rss.name, "PYTHONPYCACHEPREFIX": PYCACHE,
               "PYTHONDONTWRITEBYTECODE": None}
        result = harness.scons(root, *args, site_dir=site_dir, env=env, timeout=TIMEOUT,
                               program=[sys.executable, "-c", SCONS_WITH_RSS])
        if not result.ok:
            raise SystemExit(f"scons {' '.join(args)} failed in {root}:\n"
                             f"{result.stdout[-3000:]}{result.stderr[-3000:]}")
        text = Path(rss.name).read_text()
    return Run(result.seconds, result.steps, int(text) / 1024 if text else None, result.stdout)


def timed(argv: list[str], cwd: Path) -> float:
    result = harness.run(argv, cwd, timeout=TIMEOUT)
    if not result.ok:
        raise SystemExit(result.failure(tail=3000))
    return result.seconds


def node_count(root: Path, site_dir: Path) -> int:
    """Nodes SCons holds after a no-op build (--debug=count, post-build Node.Node)."""
    out = scons(root, site_dir, "--debug=count").stdout
    m = re.search(r"^\s*\d+\s+\d+\s+\d+\s+(\d+)\s+Node\.Node$", out, re.M)
    return int(m.group(1)) if m else -1


def read_times(root: Path, site_dir: Path) -> tuple[float, float]:
    """SConscript reading and SCons's own (walk) seconds of a no-op, from --debug=time."""
    out = scons(root, site_dir, "--debug=time").stdout
    read = float(re.search(r"SConscript file execution time: ([\d.]+)", out).group(1))
    walk = float(re.search(r"SCons execution time: ([\d.]+)", out).group(1))
    return read, walk


def touch_kernel(repo: Repo, nth: int) -> str:
    """Edit the content of one kernel (a comment), spreading edits over the models."""
    kernel = repo.kernels[(nth * 7919 + len(repo.kernels) // 2) % len(repo.kernels)]
    path = repo.root / kernel
    path.write_text(path.read_text() + f"// edited {time.time_ns()}\n")
    return kernel


# ---------------------------------------------------------------------------
# The floor: the same graph, trivial rules


def graph(repo: Repo) -> tuple[list[tuple[list[str], list[str]]], list[str]]:
    """(targets, sources) of every step the SCons build has, with the scanned dependencies.

    options.flags hangs off the model's manifest here (SCons: a Value node).
    """
    edges, modules = [], []
    kernels_of = collections.defaultdict(list)
    for kernel in repo.kernels:
        kernels_of[kernel.split("/")[2]].append(kernel)
    for model in repo.models:
        here = f"{TARGET}/{model.name}"
        source, kernels = f"models/{model.name}.mlir", kernels_of[model.name]
        manifest = f"kernels/{model.name}.toml"
        if not (repo.root / manifest).is_file():
            manifest = "kernels/all.toml"
        edges.append(([f"{here}/options.flags"], [manifest]))
        edges.append(([f"{here}/executables.mlir"], [source, f"{here}/options.flags"]))
        edges.append(([f"{here}/substitutions.flags", f"{here}/substitutions.json"],
                      [f"{here}/executables.mlir", *kernels]))
        edges.append(([f"{TARGET}/{model.name}.vmfb"],
                      [source, f"{here}/options.flags", f"{here}/substitutions.flags", *kernels]))
        modules.append(f"{TARGET}/{model.name}.vmfb")
    return edges, modules


def write_floor(repo: Repo) -> None:
    edges, modules = graph(repo)
    built = lambda path, prefix: path if path.startswith(("models/", "kernels/")) else f"{prefix}/{path}"
    make = [".PHONY: modules", "modules: " + " ".join(f"make-build/{m}" for m in modules)]
    ninja = ["rule touch", "  command = mkdir -p $dirs && touch $out", ""]
    for targets, sources in edges:
        mt = [built(t, "make-build") for t in targets]
        ms = [built(s, "make-build") for s in sources]
        make += [f"{' '.join(mt)} &: {' '.join(ms)}", "\t@mkdir -p $(sort $(dir $@)) && touch " + " ".join(mt)]
        nt = [built(t, "ninja-build") for t in targets]
        ns = [built(s, "ninja-build") for s in sources]
        dirs = " ".join(sorted({os.path.dirname(t) for t in nt}))
        ninja += [f"build {' '.join(nt)}: touch {' '.join(ns)}", f"  dirs = {dirs}"]
    ninja.append("default " + " ".join(f"ninja-build/{m}" for m in modules))
    (repo.root / "floor.mk").write_text("\n".join(make) + "\n")
    (repo.root / "floor.ninja").write_text("\n".join(ninja) + "\n")
    # SCons itself on the same graph: Command nodes, no tools, scanners or Value nodes.
    sconstruct = ["import os", "env = Environment(tools=[])",
                  "SConsignFile('scons-build/.sconsign')",
                  "def touch(target, source, env):",
                  "    for t in target:",
                  "        open(str(t), 'a').close()",
                  "        os.utime(str(t))"]
    for targets, sources in edges:
        st = [built(t, "scons-build") for t in targets]
        ss = [built(s, "scons-build") for s in sources]
        sconstruct.append(f"env.Command({st!r}, {ss!r}, touch)")
    sconstruct.append(f"Default({[f'scons-build/{m}' for m in modules]!r})")
    (repo.root / "floor.SConstruct").write_text("\n".join(sconstruct) + "\n")


def floor_noop(repo: Repo, repeat: int) -> tuple[float, float | None, float]:
    """No-op times of make, ninja (None if not installed) and plain SCons on the same graph."""
    write_floor(repo)
    plain_scons = [sys.executable, str(harness.SCONS), "-Q", "--no-site-dir", "-f", "floor.SConstruct"]
    timed(plain_scons, repo.root)
    scons_s = statistics.median(timed(plain_scons, repo.root) for _ in range(repeat))
    make = ["make", "-f", "floor.mk", "-s"]
    ninja_program = shutil.which("ninja")
    ninja = [ninja_program, "-f", "floor.ninja"] if ninja_program else None
    timed(make, repo.root)
    make_s = statistics.median(timed(make, repo.root) for _ in range(repeat))
    ninja_s = None
    if ninja:
        timed(ninja, repo.root)
        ninja_s = statistics.median(timed(ninja, repo.root) for _ in range(repeat))
    return make_s, ninja_s, scons_s


# ---------------------------------------------------------------------------
# Measuring one size


@dataclass
class Figures:
    n: int
    models: int
    nodes: int = 0
    clean: Run | None = None
    noop: list[float] = field(default_factory=list)
    noop_rss: float = 0.0
    implicit: list[float] = field(default_factory=list)
    touch: list[Run] = field(default_factory=list)
    read_s: float = 0.0
    walk_s: float = 0.0
    make_s: float = 0.0
    ninja_s: float | None = None
    plain_scons_s: float = 0.0


def measure(n: int, args, workdir: Path) -> tuple[Figures, Repo]:
    root = workdir / (f"n{n}-one-manifest" if args.one_manifest else f"n{n}")
    jobs = f"-j{args.jobs}"
    if (root / "repo.json").is_file():
        repo = reopen(root)
        print(f"N={n}: reusing {root}", file=sys.stderr)
        if (root / ".sconsign.dblite").exists():   # built by another site_scons, maybe
            print(f"N={n}: settling: {scons(root, args.site_dir, jobs).describe()}", file=sys.stderr)
    else:
        if root.exists():
            shutil.rmtree(root)
        start = time.perf_counter()
        repo = generate(root, n, args.per_model, args.jobs, args.site_dir, args.one_manifest)
        print(f"N={n}: generated {len(repo.models)} models, {repo.size} kernels in "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    figures = Figures(repo.size, len(repo.models))
    if not (root / ".sconsign.dblite").exists():
        figures.clean = scons(root, args.site_dir, jobs)
        print(f"N={n}: clean build {figures.clean.wall:.1f} s: {figures.clean.describe()}",
              file=sys.stderr)
    runs = [scons(root, args.site_dir, jobs) for _ in range(args.repeat)]
    for run in runs:
        if run.steps:
            raise SystemExit(f"N={n}: a second build ran {run.describe()}")
    figures.noop = [r.wall for r in runs]
    figures.noop_rss = max(r.rss_mib or 0 for r in runs)
    scons(root, args.site_dir, jobs, "--implicit-cache")
    figures.implicit = [scons(root, args.site_dir, jobs, "--implicit-cache").wall
                        for _ in range(args.repeat)]
    figures.nodes = node_count(root, args.site_dir)
    figures.read_s, figures.walk_s = read_times(root, args.site_dir)
    for i in range(args.repeat):
        kernel = touch_kernel(repo, i)
        run = scons(root, args.site_dir, jobs)
        model = kernel.split("/")[2]
        want = [("IREE", f"build/{TARGET}/{model}.vmfb")]
        got = [(k, t) for k, t in run.steps if k in COMPILE_STEPS]
        if got != want:
            print(f"N={n}: editing {kernel} ran {got}, expected {want}", file=sys.stderr)
        figures.touch.append(run)
    figures.make_s, figures.ninja_s, figures.plain_scons_s = floor_noop(repo, args.repeat)
    return figures, repo


# ---------------------------------------------------------------------------
# Printing


def print_table(all_figures: list[Figures], args) -> None:
    med = statistics.median
    layout = "one manifest" if args.one_manifest else "a manifest a model"
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\nsynthetic repos ({args.per_model} kernels a model, {layout}, {TARGET}, source mode), "
          f"scons -j{args.jobs}, medians of {args.repeat}; site_scons: {args.site_dir}; "
          f"load average now {load} on {os.cpu_count()} cores")
    head = (f"{'N':>5} {'models':>6} {'nodes':>6} {'clean s':>8} {'no-op s':>8} {'(min)':>6} "
            f"{'implicit s':>10} {'read s':>7} {'walk s':>7} {'touch s':>8} {'touch steps':<18} "
            f"{'peak MiB':>8} {'no-op MiB':>9} {'make s':>7} {'ninja s':>7} {'plain scons s':>13}")
    print(head)
    print("-" * len(head))
    for f in all_figures:
        clean = f"{f.clean.wall:8.1f}" if f.clean else f"{'-':>8}"
        peak = f"{f.clean.rss_mib:8.0f}" if f.clean and f.clean.rss_mib else f"{'-':>8}"
        touch = f.touch[-1]
        steps = f"{touch.count()} ({touch.describe()})"
        ninja = f"{f.ninja_s:7.3f}" if f.ninja_s is not None else f"{'-':>7}"
        print(f"{f.n:>5} {f.models:>6} {f.nodes:>6} {clean} {med(f.noop):8.2f} {min(f.noop):6.2f} "
              f"{med(f.implicit):10.2f} {f.read_s:7.2f} {f.walk_s:7.2f} "
              f"{med(r.wall for r in f.touch):8.2f} {steps:<18} {peak} {f.noop_rss:9.0f} "
              f"{f.make_s:7.3f} {ninja} {f.plain_scons_s:13.3f}")
    print("\nclean: once per N; peak MiB: the scons process itself during the clean build "
          "(not iree-compile); no-op MiB: during a no-op; read/walk: --debug=time's SConscript "
          "and SCons execution times of one no-op; touch steps: compiler steps (IREE, DUMP, ...) "
          "of the last touch build, all its steps in brackets; make/ninja/plain scons: no-op of "
          "the same graph with touch rules (plain scons: Command nodes, no tools, no scanners)")
    if len(all_figures) > 1:
        print("\ngrowth between sizes, ms per added kernel (linear growth: about equal rows)")
        print(f"{'from':>5} {'to':>5} {'clean':>8} {'no-op':>8} {'implicit':>8} {'read':>8} "
              f"{'walk':>8} {'touch':>8} {'nodes':>6}")
        for a, b in zip(all_figures, all_figures[1:]):
            dn = b.n - a.n
            per = lambda x, y: f"{1000 * (y - x) / dn:8.2f}"
            clean = per(a.clean.wall, b.clean.wall) if a.clean and b.clean else f"{'-':>8}"
            print(f"{a.n:>5} {b.n:>5} {clean} {per(med(a.noop), med(b.noop))} "
                  f"{per(med(a.implicit), med(b.implicit))} {per(a.read_s, b.read_s)} "
                  f"{per(a.walk_s, b.walk_s)} "
                  f"{per(med(r.wall for r in a.touch), med(r.wall for r in b.touch))} "
                  f"{(b.nodes - a.nodes) / dn:6.1f}")


# ---------------------------------------------------------------------------
# Profiling the no-op


PHASES = [   # (label, file suffix, function): the largest cumulative time of a match
    ("scons main, total", "SCons/Script/Main.py", "_main"),
    ("  reading SConstruct (all our declarations)", "SCons/Script/SConscript.py", "_SConscript"),
    ("  up-to-date walk (_build_targets)", "SCons/Script/Main.py", "_build_targets"),
    ("    Taskmaster: finding the next node", "SCons/Taskmaster/__init__.py", "_find_next_ready_node"),
    ("    scanning (Node.scan)", "SCons/Node/__init__.py", "scan"),
    ("    node.changed()", "SCons/Node/__init__.py", "changed"),
    ("    content signatures (get_csig)", "SCons/Node/FS.py", "get_csig"),
    ("    storing node info (visited)", "SCons/Node/FS.py", "visited"),
    ("    loading .sconsign, per directory", "SCons/SConsign.py", "__init__"),
    ("    writing .sconsign", "SCons/SConsign.py", "write"),
    ("subprocesses (all)", "subprocess.py", "run"),
    ("builder calls (BuilderBase.__call__)", "SCons/Builder.py", "__call__"),
    ("env.Value", "SCons/Environment.py", "Value"),
    ("env.Clone", "SCons/Environment.py", "Clone"),
]


def profile(repo: Repo, args) -> None:
    """Profile one no-op build and print where its time goes.

    With -j2 and more SCons walks the graph in worker threads, which cProfile
    does not see, so the profiled build is -j1.
    """
    out = repo.root / "noop.prof"
    wall = scons(repo.root, args.site_dir, "-j1", f"--profile={out}").wall
    stats = pstats.Stats(str(out))
    entries = stats.stats      # (file, line, func) -> (cc, nc, tt, ct, callers)
    total = max(ct for _, _, _, ct, _ in entries.values())
    print(f"\nprofile of a no-op build (-j1), N={repo.size} (wall {wall:.2f} s under the profiler; "
          f"profiled {total:.2f} s; {out})")

    def cumulative(suffix: str, name: str) -> tuple[int, float]:
        """Calls and cumulative seconds of the costliest match (matches may nest)."""
        found = [(ct, nc) for (file, _, func), (_, nc, _, ct, _) in entries.items()
                 if file.endswith(suffix) and func == name]
        ct, nc = max(found) if found else (0.0, 0)
        return nc, ct

    print(f"\n{'phase / SCons function':<52} {'calls':>8} {'cum ms':>9}")
    for label, suffix, name in PHASES:
        calls, cum = cumulative(suffix, name)
        print(f"{label:<52} {calls:>8} {1000 * cum:9.1f}")

    site = str(args.site_dir.resolve())
    ours = [(file, func, nc, tt, ct) for (file, _, func), (_, nc, tt, ct, _) in entries.items()
            if file.startswith(site)]
    print(f"\nour functions ({site}), by cumulative time (nested ones are counted in their callers too)")
    print(f"{'function':<60} {'calls':>8} {'own ms':>8} {'cum ms':>9}")
    for file, func, nc, tt, ct in sorted(ours, key=lambda e: -e[4])[:args.top]:
        where = f"{Path(file).relative_to(site)}:{func}"
        print(f"{where:<60} {nc:>8} {1000 * tt:8.1f} {1000 * ct:9.1f}")

    print("\nsubprocesses run (subprocess.run), by caller")
    for (file, _, func), (_, nc, _, ct, callers) in entries.items():
        if file.endswith("subprocess.py") and func == "run":
            for (cfile, _, cfunc), (_, cnc, _, cct) in callers.items():
                print(f"  {Path(cfile).name}:{cfunc:<40} x{cnc:<5} {1000 * cct:8.1f} ms")

    print(f"\ntop {args.top} functions by own time")
    print(f"{'function':<70} {'calls':>8} {'own ms':>8} {'cum ms':>9}")
    for (file, line, func), (_, nc, tt, ct, _) in sorted(entries.items(), key=lambda e: -e[1][2])[:args.top]:
        short = "/".join(Path(file).parts[-2:]) if file != "~" else "~"
        where = f"{short}:{line}:{func}"
        print(f"{where[-70:]:<70} {nc:>8} {1000 * tt:8.1f} {1000 * ct:9.1f}")


# ---------------------------------------------------------------------------


def baseline(args, workdir: Path) -> None:
    """The cost of starting SCons with the tools this SConstruct loads, on an empty project."""
    root = workdir / "empty"
    root.mkdir(exist_ok=True)
    for name, sconstruct in (("scons, Environment(tools=[])", "Environment(tools=[])\n"),
                             ("scons, Environment(tools=['default'])", "Environment()\n"),
                             ("scons, + iree_project, no manifests",
                              "env = Environment(tools=['default', 'iree_project'])\n"
                              "env.IreeKernelProject()\n")):
        (root / "SConstruct").write_text(sconstruct)
        scons(root, args.site_dir)   # warm: bytecode written
        walls = [scons(root, args.site_dir).wall for _ in range(args.repeat)]
        print(f"{name:<45} {statistics.median(walls):6.3f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000",
                        help="kernel counts, comma-separated (default: %(default)s)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per median (default: %(default)s)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="scons -j (default: cores)")
    parser.add_argument("--per-model", type=int, default=10,
                        help="kernels per model; models = N // this (default: %(default)s)")
    parser.add_argument("--one-manifest", action="store_true",
                        help="all models and substitutions in one manifest, not one a model")
    parser.add_argument("--keep", type=Path, metavar="DIR",
                        help="generate the repos in DIR/n<N> and leave them; reuse those there")
    parser.add_argument("--profile", action="store_true",
                        help="profile the no-op build of the largest size")
    parser.add_argument("--top", type=int, default=25, help="rows of the profile tables")
    parser.add_argument("--site-dir", type=Path,
                        help="the site_scons to build with (default: a copy of this repo's, "
                        "taken at the start, so that edits made meanwhile do not mix in)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        workdir = args.keep.resolve() if args.keep else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        if args.site_dir is None:
            args.site_dir = workdir / "site_scons"
            shutil.rmtree(args.site_dir, ignore_errors=True)
            shutil.copytree(REPO / "site_scons", args.site_dir,
                            ignore=shutil.ignore_patterns("__pycache__"))
        args.site_dir = args.site_dir.resolve()
        load = " ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"fixed cost, median of {args.repeat} (load average {load} on {os.cpu_count()} cores)")
        baseline(args, workdir)
        results, repos = [], {}
        for n in sizes:
            figures, repos[n] = measure(n, args, workdir)
            results.append(figures)
        print_table(results, args)
        if args.profile:
            profile(repos[max(sizes)], args)


if __name__ == "__main__":
    main()
