"""The Triton GEMM family on the H200: one manifest entry replaces every GEMM of a model.

Marked ``gpu``. Two carries, each built and carried alone (the carry limit is 64 MiB):
- ``block``: bench/corpus.py's transformer block exported as MLIR
  (torch_transformer_mlir, ``--scale 8 --tokens 2048``: d = 512, 4 heads, 2048
  tokens), whose six GEMM executables one entry (``match = "*batch_matmul*"``)
  takes: the q/k/v and output projections, the attention scores (scaled),
  attention x V (transposed store), the MLP (bias + GELU, bias + residual); beside
  it torch_layers (Linear + ReLU at four sites, a model the family was not written
  for) and two 4096^3 GEMMs (f32, f16 -> f32);
- ``hf``: HuggingFace BERT and GPT-2 built from configs (bench/corpus.py hf_bert,
  hf_gpt2: 256 wide, 2 layers, 1024 tokens), ``.pt2`` files, ``match = "*matmul*"``:
  nn.Linear (x @ W^T), GPT-2's Conv1D (x @ W) and its tanh GELU.
The kernel is kernels/families/gemm.py compiled for sm_90a, in two precisions:
3xTF32 (about f32's accuracy, verified with the default tolerance) and TF32
(verified with rtol = atol = 2e-2, as torch's allow_tf32).

Built where triton and iree-compile are (the GPU machine has neither; hf needs
transformers: bench/requirements-hf.txt):

    PYTHONPATH=tests:site_scons ./setup.sh python tests/gpu/test_gemm_family_on_gpu.py block|hf

writes build/gemm-family-<carry>-gpu/ (modules, verification plans, microbenchmarks,
the facts); carry that folder. On the GPU the tests verify every instance, time each
beside IREE's executable and cuBLAS (torch, same shapes, same GPU, same run), and
each model end to end beside plain IREE, PyTorch eager and torch.compile, printing
the tables. A carry not present is skipped.
"""
from __future__ import annotations

import io
import json
import lzma
import shutil
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import REPO
from cuda_models import BENCHMARK_MODULE, NEEDS_CUDA, RUN_MODULE, copy_carried, verify_plans
from harness import scons
from iree_kernels.check import benchmarks
from iree_kernels.core import toolchains

BLOCK = "torch_transformer_mlir"
FACTS = "families.json"
GEMM_MLIR = """func.func @main(%a: tensor<4096x4096x{element}>, %b: tensor<4096x4096x{element}>)
    -> tensor<4096x4096x{result}> {{
  %zero = arith.constant 0.0 : {result}
  %empty = tensor.empty() : tensor<4096x4096x{result}>
  %init = linalg.fill ins(%zero : {result}) outs(%empty : tensor<4096x4096x{result}>)
      -> tensor<4096x4096x{result}>
  %c = linalg.matmul ins(%a, %b : tensor<4096x4096x{element}>, tensor<4096x4096x{element}>)
      outs(%init : tensor<4096x4096x{result}>) -> tensor<4096x4096x{result}>
  return %c : tensor<4096x4096x{result}>
}}
"""
GEMMS = {"gemm_f32": ("f32", "f32"), "gemm_f16": ("f16", "f32")}


@dataclass(frozen=True)
class Carry:
    """What one GPU run needs, built here: models, the entry's match for each, the instances
    the entry takes in all, the models timed end to end."""
    name: str
    corpus: tuple[str, ...]             # bench/corpus.py models
    corpus_flags: tuple[str, ...]
    matches: dict[str, str]
    instances: int
    whole: tuple[str, ...]
    whole_variants: tuple[str, ...] = ("tf32x3", "tf32")     # under the carry limit

    @property
    def root(self) -> Path:
        return REPO / f"build/gemm-family-{self.name}"

    @property
    def gpu(self) -> Path:
        return REPO / f"build/gemm-family-{self.name}-gpu"


CARRIES = {c.name: c for c in (
    # torch_layers: IREE dispatches one executable (x @ W^T, bias, ReLU as cmpf + select) at
    # four sites. The 4096^3 GEMMs: the pack against cuBLAS at its best shape.
    Carry("block", (BLOCK, "torch_layers"), ("--scale", "8", "--tokens", "2048"),
          {BLOCK: "*batch_matmul*", "torch_layers": "*matmul*",
           **{gemm: "*_matmul_*" for gemm in GEMMS}}, 6 + 1 + len(GEMMS), (BLOCK,)),
    Carry("hf", ("hf_bert", "hf_gpt2"), ("--scale", "8", "--tokens", "1024"),
          {"hf_bert": "*matmul*", "hf_gpt2": "*matmul*"}, 4 + 4, ("hf_bert", "hf_gpt2"),
          ("tf32",)),
)}
# name: (PRECISION, tolerance lines of a model's entry, of the 4096^3 GEMMs' entry). IREE's
# f32 reference sums 4096 products in another order: 3xTF32 lands within 1e-3 of it there, and
# TF32 (10-bit mantissas, as torch's allow_tf32) within 0.1 of outputs of about 60.
VARIANTS = {"tf32x3": (3, "", "rtol = 1e-3\natol = 1e-3\n"),
            "tf32": (1, "rtol = 2e-2\natol = 2e-2\n", "rtol = 2e-2\natol = 1e-1\n")}
MANIFEST = """
[models.{model}]
source = "models/{source}"
targets = ["cuda"]

[[substitutions]]
model = "{model}"
target = "cuda"
match = "{match}"
file = "kernels/gemm.py"
arch = "sm_90a"
constexprs = {{ BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 32, GROUP_M = 8, PRECISION = {precision} }}
num_warps = 8
num_stages = 3
workgroup_count = ["ceildiv(m, 128) * ceildiv(n, 128)", "batch"]
{tolerance}"""


def module(variant: str, model: str) -> str:
    return f"build/{variant}/cuda/{model}.vmfb"


def plain(model: str) -> str:
    return f"build/plain/{model}.vmfb"


def source(carry: Carry, model: str) -> str:
    """The model's file under models/: the .pt2 where the corpus writes one."""
    return next(f"{model}{suffix}" for suffix in (".pt2", ".mlir")
                if (carry.root / "models" / f"{model}{suffix}").is_file())


def build(carry: Carry) -> None:
    """Both variants, the plain modules and the facts, then the GPU's copy."""
    root = carry.root
    (root / "kernels").mkdir(parents=True, exist_ok=True)
    shutil.copyfile(REPO / "SConstruct", root / "SConstruct")
    shutil.copyfile(REPO / "kernels/families/gemm.py", root / "kernels/gemm.py")
    if not all((root / f"models/{name}").is_dir() for name in carry.corpus):
        subprocess.run([sys.executable, "-m", "bench.corpus", str(root / "models"), "--only",
                        ",".join(carry.corpus), *carry.corpus_flags, "--root", str(root)],
                       cwd=REPO, check=True, timeout=600)
    for gemm, (element, result) in GEMMS.items():
        if gemm in carry.matches:
            (root / f"models/{gemm}.mlir").write_text(GEMM_MLIR.format(element=element,
                                                                       result=result))
    wanted = [FACTS, *(f"models/{model}/{f}" for model in carry.whole
                       for f in ("input0.npy", "output0.npy"))]
    for variant, (precision, model_tolerance, gemm_tolerance) in VARIANTS.items():
        (root / "kernels/family.toml").write_text("".join(MANIFEST.format(
            model=model, source=source(carry, model), match=match, precision=precision,
            tolerance=gemm_tolerance if model in GEMMS else model_tolerance)
            for model, match in carry.matches.items()))
        made = scons(root, f"BUILD_DIR=build/{variant}", "modules", "verify", "microbenchmarks")
        print(made.stdout)
        assert made.ok, made.failure()
        for model in carry.matches:
            here = root / f"build/{variant}/cuda/{model}"
            timed = f"build/{variant}/cuda/{model}/microbenchmarks.json"
            wanted += [timed, *(p.relative_to(root) for p in (here / "verify").iterdir()),
                       *(path for r in benchmarks.from_json((root / timed).read_text())
                         for path in (r.plain_module, r.module))]
        if variant in carry.whole_variants:
            wanted += [module(variant, model) for model in carry.whole]
    facts = {}              # by export: executables of two models may share a name
    for found in (root / "build/tf32x3/.families").glob("?" * 64 + ".json"):  # not stat.json
        for e in json.loads(found.read_text())["executables"].values():
            if e["facts"] or e["export"] not in facts:    # another reader's kept file may decline
                facts[e["export"]] = e
    (root / FACTS).write_text(json.dumps({"executables": facts}))
    for model in carry.whole:
        imported = f"build/tf32x3/models/{model}.mlir"          # a .pt2's import
        (root / plain(model)).parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([toolchains.iree_compile(),
                        imported if (root / imported).is_file() else f"models/{model}.mlir",
                        f"@build/tf32x3/cuda/{model}/options.flags", "-o", plain(model)],
                       cwd=root, check=True, capture_output=True, timeout=1200)
        wanted.append(plain(model))
        if source(carry, model).endswith(".pt2"):
            wanted.append(_without_weights(root, model))
    copy_carried(root, carry.gpu, wanted)


def _without_weights(root: Path, model: str) -> str:
    """The model's .pt2 with every weight zero, xz'ed (the GPU run seeds them again as
    bench/corpus.py did): a few KB instead of the weights' MB."""
    import torch
    program = torch.export.load(root / f"models/{model}.pt2")
    with torch.no_grad():
        for tensor in program.state_dict.values():
            tensor.zero_()
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    relative = f"models/{model}.zeros.pt2.xz"
    (root / relative).write_bytes(lzma.compress(buffer.getvalue()))
    return relative


if __name__ == "__main__":
    for name in sys.argv[1:] or CARRIES:
        build(CARRIES[name])
    sys.exit(0)

pytestmark = NEEDS_CUDA


@pytest.fixture(params=list(CARRIES))
def carry(request, monkeypatch) -> Carry:
    """A carried build, the working directory at its root (plans name files relative to it)."""
    carried = CARRIES[request.param]
    if not (carried.gpu / FACTS).is_file():
        pytest.skip(f"{carried.gpu} is not here: build it with 'PYTHONPATH=tests:site_scons "
                    f"./setup.sh python tests/gpu/test_gemm_family_on_gpu.py {carried.name}' "
                    "where triton and iree-compile are, and carry it")
    monkeypatch.chdir(carried.gpu)
    return carried


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_instance_matches_iree_on_the_gpu(carry, tmp_path, variant):
    plans = sorted(path for model in carry.matches for path in
                   (carry.gpu / f"build/{variant}/cuda/{model}/verify").glob("*.verify.json"))
    assert len(plans) == carry.instances, plans
    assert not verify_plans(plans, tmp_path, f"{variant}: ")


def _median_ms(step, repeats: int = 10, iterations: int = 20) -> float:
    """Median over ``repeats`` of the mean time of ``iterations`` calls, CUDA events, in ms."""
    import torch
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(iterations):
            step()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / iterations)
    return statistics.median(times)


def _cublas_us(facts: dict, tf32: bool) -> float:
    """cuBLAS (torch.bmm) on one instance's shapes, layout and element types, in microseconds."""
    import torch
    torch.backends.cuda.matmul.allow_tf32 = tf32
    b, m, n, k = facts["batch"], facts["m"], facts["n"], facts["k"]
    dtype = {"f32": torch.float32, "f16": torch.float16}[facts["lhs"]["element"]]
    lhs = torch.randn(b, k, m, device="cuda", dtype=dtype).transpose(1, 2) \
        if facts["lhs"]["dims"][-1] == "m" else torch.randn(b, m, k, device="cuda", dtype=dtype)
    rhs = torch.randn(b, n, k, device="cuda", dtype=dtype).transpose(1, 2) \
        if facts["rhs"]["dims"][-1] == "k" else torch.randn(b, k, n, device="cuda", dtype=dtype)
    out = torch.empty(b, m, n, device="cuda", dtype=dtype)
    return 1000 * _median_ms(lambda: torch.bmm(lhs, rhs, out=out))


def test_each_instance_beside_iree_and_cublas(carry):
    found = json.loads((carry.gpu / FACTS).read_text())["executables"]
    flags = ["--benchmark_repetitions=10", "--batch_size=20"]
    rows = [("executable", "shape", "IREE us", "3xTF32 us", "TF32 us", "cuBLAS fp32 us",
             "cuBLAS TF32 us", "3xTF32/IREE", "TF32 % of cuBLAS TF32")]
    timed = {}
    for variant in VARIANTS:
        for model in carry.matches:
            results = benchmarks.from_json(
                (carry.gpu / f"build/{variant}/cuda/{model}/microbenchmarks.json").read_text())
            benchmarks.retime(results, BENCHMARK_MODULE, flags)
            for r in results:
                key = (model, r.executable, r.export)
                timed.setdefault(key, {})["iree"] = r.plain_us
                timed[key][variant] = r.substituted_us
    facts_of = {f["export"]: f["facts"] for f in found.values() if f["facts"]}
    for (model, name, export), t in sorted(timed.items()):
        facts = facts_of[export]
        fp32, tf32 = _cublas_us(facts, False), _cublas_us(facts, True)
        shape = f"{facts['batch']}x{facts['m']}x{facts['n']}x{facts['k']}"
        rows.append((f"{model}/{name}", f"{shape} {facts['lhs']['element']}",
                     f"{t['iree']:.1f}", f"{t['tf32x3']:.1f}", f"{t['tf32']:.1f}",
                     f"{fp32:.1f}", f"{tf32:.1f}", f"{t['iree'] / t['tf32x3']:.2f}x",
                     f"{100 * tf32 / t['tf32']:.0f}%"))
    print(benchmarks.columns(rows), end="")
    assert len(timed) == carry.instances and all(t["tf32x3"] < t["iree"] for t in timed.values())


def _torch_model(carry: Carry, model: str):
    """The model in PyTorch on the GPU, seeded as bench/corpus.py seeded it."""
    import torch
    from bench import corpus
    carried = carry.gpu / f"models/{model}.zeros.pt2.xz"
    if carried.is_file():                       # torch.export's program, weights seeded again
        network = torch.export.load(io.BytesIO(lzma.decompress(carried.read_bytes()))).module()
        for node in network.graph.nodes:        # tensors it makes were traced on the CPU
            if "device" in node.kwargs:
                node.kwargs = {**node.kwargs, "device": torch.device("cuda", 0)}
        network.recompile()
        for part in network.modules():           # and so were the constants it holds
            for name, value in list(vars(part).items()):
                if isinstance(value, torch.Tensor):
                    setattr(part, name, value.cuda())
    else:
        network, _ = corpus._torch_modules(8, 2048)[model]
        network = network.eval()
    corpus._seed_weights(network, 0)
    return network.cuda()


def test_each_model_end_to_end_beside_pytorch(carry, tmp_path):
    import numpy as np
    import torch
    rows = [("model", "run", "ms", "plain IREE / this", "this / torch.compile fp32",
             "largest difference from torch")]
    differences = {}
    for model in carry.whole:
        given = f"models/{model}/input0.npy"
        reference = np.load(carry.gpu / f"models/{model}/output0.npy")
        paths = {"plain": plain(model), **{v: module(v, model) for v in carry.whole_variants}}
        for name, path in paths.items():
            out = tmp_path / f"{model}.{name}.npy"
            subprocess.run([RUN_MODULE, f"--module={path}", "--device=cuda", "--function=main",
                            f"--input=@{given}", f"--output=@{out}"],
                           check=True, capture_output=True, timeout=600)
            differences[model, name] = float(np.max(np.abs(np.load(out) - reference)))
        flags = ["--function=main", f"--input=@{given}", "--benchmark_repetitions=10"]
        ms = {name: benchmarks.time_per_dispatch(BENCHMARK_MODULE, Path(path), "cuda", flags)
              / 1000 for name, path in paths.items()}
        network = _torch_model(carry, model)
        x = torch.from_numpy(np.load(carry.gpu / given)).cuda()
        with torch.no_grad():
            differences[model, "torch eager fp32"] = float(np.max(np.abs(
                network(x).cpu().numpy() - reference)))       # seeded on the GPU as on the CPU
            torch.backends.cuda.matmul.allow_tf32 = False
            ms["torch eager fp32"] = _median_ms(lambda: network(x))
            torch.backends.cuda.matmul.allow_tf32 = True
            ms["torch eager TF32"] = _median_ms(lambda: network(x))
            torch.backends.cuda.matmul.allow_tf32 = False
            compiled = torch.compile(network)
            try:
                ms["torch.compile fp32"] = _median_ms(lambda: compiled(x))
            except Exception as e:          # a table without it beats none
                print(f"{model}: torch.compile failed: {str(e).splitlines()[0]}")
                ms["torch.compile fp32"] = float("nan")
        for name, value in ms.items():
            difference = differences.get((model, name))
            rows.append((model, name, f"{value:.3f}", f"{ms['plain'] / value:.2f}x",
                         f"{value / ms['torch.compile fp32']:.2f}x",
                         "-" if difference is None else f"{difference:.2g}"))
        assert all(ms[v] < ms["plain"] for v in carry.whole_variants), (model, ms)
    print(benchmarks.columns(rows), end="")
    tolerance = {"plain": 1e-3, "tf32x3": 1e-3, "tf32": 5e-2, "torch eager fp32": 1e-3}
    assert all(d < tolerance[name] for (_, name), d in differences.items()), differences
