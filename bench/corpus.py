"""A corpus of models like the ones users bring: dense weights, torch exports, shared and dynamic dispatches.

    ./setup.sh python -m bench.corpus OUTDIR [--only NAME[,NAME...]] [--scale S] [--tokens T]
        [--seed N] [--onnx squeezenet,densenet121,...] [--list]

writes, for each model, ``OUTDIR/<name>.onnx|.mlir|.pt2``, its seeded inputs
``OUTDIR/<name>/input<i>.npy`` and, for the torch models, torch's own
outputs (``output<i>.npy``) with ``OUTDIR/<name>.expected.toml`` (paths in it
relative to ``--root``, default the working directory, as a repo reads them).
Everything is generated, nothing downloaded, and the same arguments give the
same bytes.

The models (``--list``):
  onnx_<light>      the onnx package's light model (``light_<light>.onnx``,
                    ``--onnx``; default squeezenet, 4.9 MB of weights) with
                    every ``ConstantOfShape`` splat replaced by a dense seeded
                    initializer of its shape, final Softmax removed. Sizes:
                    squeezenet 4.9 MB, shufflenet 5.7, inception_v1 28,
                    densenet121 33, inception_v2 45, resnet50 102.
  torch_cnn         conv/batch norm/in-place relu/pool/linear, a ``.pt2``
                    (in-place ops and batch norm reach iree-compile only
                    decomposed)
  torch_transformer a transformer block (LayerNorm, 4-head attention, GELU
                    MLP), a ``.pt2`` (``torch.export.save``)
  torch_transformer_mlir  the same block exported with iree-turbine's
                    ``save_mlir``
  torch_layers      four Linear+ReLU layers of one shape: one executable with
                    several dispatch sites, exported with iree-turbine's
                    ``save_mlir`` (the ``.mlir`` path of docs/workflows.md)
  torch_dynamic     an MLP whose batch is dynamic, a ``.pt2``; its expected
                    cases have batches 3 and 5
  hf_bert, hf_gpt2  HuggingFace transformers' BERT and GPT-2 built from a config
                    (2 layers, 4 heads, 32 x ``--scale`` wide, a vocabulary of 512,
                    ``--tokens`` positions), weights seeded, a ``.pt2`` of
                    ``last_hidden_state`` from token ids; not in the default corpus
                    (they need transformers: ``.venv/bin/python -m pip install -r bench/requirements-hf.txt``)
``--scale`` multiplies the torch models' widths (weights grow with its square);
``--tokens`` is torch_transformer's sequence length (default 16: its matmuls
have 16 rows).

Not for: measuring (bench/real_models.py and the corpus test time builds of
these), or fetching real weights. Needs onnx for the ONNX models, torch and
iree-turbine for the others (requirements.txt pins them).
"""
from __future__ import annotations

import argparse
import io
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

TORCH_MODELS = ("torch_cnn", "torch_transformer", "torch_transformer_mlir", "torch_layers",
                "torch_dynamic")
HF_MODELS = ("hf_bert", "hf_gpt2")
HF_VOCABULARY = 512
DEFAULT_ONNX = ("squeezenet",)
# Expected outputs of the torch models are torch's own: IREE differs by rounding.
TOLERANCE = {"atol": 1e-4, "rtol": 1e-4}


@dataclass
class Entry:
    """One model written: its source and cases, paths relative to the corpus folder."""
    name: str
    source: str
    function: str
    cases: list[dict] = field(default_factory=list)   # {"inputs": [...], "outputs": [...]}
    weights_bytes: int = 0
    note: str = ""

    @property
    def inputs(self) -> list[str]:
        return self.cases[0]["inputs"]


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".tmp-{path.name}")
    partial.write_bytes(data)
    partial.replace(path)


def _npy(path: Path, array: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.save(buffer, np.ascontiguousarray(array), allow_pickle=False)
    _write_atomically(path, buffer.getvalue())


# --- ONNX: the light models with dense weights ---------------------------------

def light_folder() -> Path:
    import onnx
    return Path(onnx.__file__).parent / "backend/test/data/light"


def light_models() -> list[str]:
    return sorted(p.stem.removeprefix("light_") for p in light_folder().glob("light_*.onnx"))


def _weight(rng: np.random.Generator, shape: tuple, role: str) -> np.ndarray:
    """Seeded values a layer's input of ``role`` can take without the network blowing up."""
    if role in ("scale", "var"):                    # BatchNormalization: positive
        return rng.uniform(0.5, 1.5, shape).astype(np.float32)
    if len(shape) <= 1:                             # biases, means
        return (rng.standard_normal(shape) * 0.01).astype(np.float32)
    fan_in = int(np.prod(shape[1:]))
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


BATCH_NORM_ROLES = {1: "scale", 2: "bias", 3: "mean", 4: "var"}


def dense_onnx(light: str, name: str, seed: int):
    """``light_<light>.onnx`` with dense weights, graph named ``name``, final Softmax removed."""
    import onnx
    from onnx import numpy_helper
    from iree_kernels.importers.onnx_models import strip_softmax
    source = light_folder() / f"light_{light}.onnx"
    if not source.is_file():
        raise SystemExit(f"corpus: no {source.name} in the installed onnx package "
                         f"({source.parent}); available: {', '.join(light_models())}")
    model = onnx.load(source)
    graph = model.graph
    arrays = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    arrays.update({n.output[0]: numpy_helper.to_array(n.attribute[0].t)
                   for n in graph.node if n.op_type == "Constant" and n.attribute})
    roles = {}
    for node in graph.node:
        if node.op_type == "BatchNormalization":
            roles.update({node.input[i]: r for i, r in BATCH_NORM_ROLES.items() if i < len(node.input)})
    rng = np.random.default_rng(seed)
    dense, kept = [], []
    for node in graph.node:
        if node.op_type != "ConstantOfShape":
            kept.append(node)
            continue
        shape = tuple(int(d) for d in arrays[node.input[0]])
        values = _weight(rng, shape, roles.get(node.output[0], "weight"))
        dense.append(numpy_helper.from_array(values, node.output[0]))
    del graph.node[:]
    graph.node.extend(kept)
    used = {i for n in graph.node for i in n.input} | {o.name for o in graph.output}
    unused = [i for i in graph.initializer if i.name not in used]
    for initializer in unused:
        graph.initializer.remove(initializer)
    for value in [v for v in graph.input if v.name not in used]:
        graph.input.remove(value)
    graph.initializer.extend(dense)
    if model.ir_version < 4:        # the version converter wants every initializer an input
        listed = {v.name for v in graph.input}
        graph.input.extend(onnx.helper.make_tensor_value_info(
            t.name, t.data_type, list(t.dims)) for t in dense if t.name not in listed)
    strip_softmax(model)
    graph.name = name
    onnx.checker.check_model(model)
    weights = sum(int(np.prod(t.dims)) * 4 for t in dense)
    constant = {t.name for t in graph.initializer}
    (data,) = [v for v in graph.input if v.name not in constant]
    shape = [d.dim_value for d in data.type.tensor_type.shape.dim]
    return model, weights, shape


def write_onnx(out: Path, light: str, seed: int) -> Entry:
    name = f"onnx_{light}"
    model, weights, shape = dense_onnx(light, name, seed)
    _write_atomically(out / f"{name}.onnx", model.SerializeToString())
    x = np.random.default_rng(seed + 1).standard_normal(shape).astype(np.float32)
    _npy(out / name / "input0.npy", x)
    return Entry(name, f"{name}.onnx", name, [{"inputs": [f"{name}/input0.npy"], "outputs": []}],
                 weights, f"light_{light} with dense weights")


# --- torch models ---------------------------------------------------------------

def _torch_modules(scale: float, tokens: int = 16):
    """The torch models' classes and example inputs, defined only once torch is imported."""
    import torch
    from torch import nn

    def width(n: int) -> int:
        return max(1, round(n * scale))

    class Cnn(nn.Module):
        def __init__(self):
            super().__init__()
            a, b = width(16), width(32)
            self.features = nn.Sequential(
                nn.Conv2d(3, a, 3, padding=1), nn.BatchNorm2d(a), nn.ReLU(inplace=True),
                nn.MaxPool2d(2),
                nn.Conv2d(a, b, 3, padding=1), nn.ReLU(inplace=True), nn.AdaptiveAvgPool2d(1),
                nn.Flatten())
            self.classifier = nn.Linear(b, 10)

        def forward(self, x):
            return self.classifier(self.features(x))

    class Block(nn.Module):
        """A pre-norm transformer block: attention, then a GELU MLP, each with a residual."""

        def __init__(self, d: int, heads: int = 4):
            super().__init__()
            self.heads = heads
            self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.q, self.k, self.v = nn.Linear(d, d), nn.Linear(d, d), nn.Linear(d, d)
            self.proj = nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x):
            b, s, d = x.shape
            h = self.norm1(x)
            q, k, v = (f(h).reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
                       for f in (self.q, self.k, self.v))
            attention = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1)
            x = x + self.proj((attention @ v).transpose(1, 2).reshape(b, s, d))
            return x + self.mlp(self.norm2(x))

    class Layers(nn.Module):
        def __init__(self, d: int, n: int = 4):
            super().__init__()
            self.layers = nn.ModuleList(nn.Linear(d, d) for _ in range(n))

        def forward(self, x):
            for layer in self.layers:
                x = torch.relu(layer(x))
            return x

    class Mlp(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(32, width(64)), nn.ReLU(), nn.Linear(width(64), 8))

        def forward(self, x):
            return self.net(x)

    d = 4 * max(1, round(16 * scale))               # divisible by the 4 heads
    return {"torch_cnn": (Cnn(), [(1, 3, 32, 32)]),
            "torch_transformer": (Block(d), [(1, tokens, d)]),
            "torch_transformer_mlir": (Block(d), [(1, tokens, d)]),
            "torch_layers": (Layers(width(128)), [(8, width(128))]),
            "torch_dynamic": (Mlp(), [(3, 32), (5, 32)])}


def _seed_weights(module, seed: int) -> int:
    """Every parameter and batch norm statistic set to seeded values (numpy's generator, not
    torch's); their bytes."""
    import torch
    rng = np.random.default_rng(seed)
    total = 0
    with torch.no_grad():
        for name, parameter in sorted(module.named_parameters()):
            shape = tuple(parameter.shape)
            role = "scale" if name.endswith("weight") and len(shape) == 1 else "weight"
            parameter.copy_(torch.from_numpy(_weight(rng, shape, role)))
            total += parameter.numel() * parameter.element_size()
        for name, buffer in sorted(module.named_buffers()):
            role = name.rpartition("running_")[2]          # batch norm's statistics
            if role in ("mean", "var"):
                buffer.copy_(torch.from_numpy(_weight(rng, tuple(buffer.shape), role)))
                total += buffer.numel() * buffer.element_size()
    return total


def write_torch(out: Path, name: str, seed: int, scale: float, tokens: int = 16) -> Entry:
    import torch
    import iree.turbine.aot as aot
    module, shapes = _torch_modules(scale, tokens)[name]
    module.eval()
    weights = _seed_weights(module, seed)
    rng = np.random.default_rng(seed + 1)
    inputs = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
    example = (torch.from_numpy(inputs[0]),)
    dynamic = None
    if name == "torch_dynamic":
        dynamic = {"x": {0: torch.export.Dim("batch", min=1, max=1024)}}
    exported = torch.export.export(module, example, dynamic_shapes=dynamic)
    if name in ("torch_cnn", "torch_transformer", "torch_dynamic"):
        source = f"{name}.pt2"
        buffer = io.BytesIO()
        torch.export.save(exported, buffer)
        _write_atomically(out / source, buffer.getvalue())
    else:
        source = f"{name}.mlir"
        partial = out / f".tmp-{source}"
        aot.export(exported).save_mlir(str(partial))
        partial.replace(out / source)
    cases = []
    for n, x in enumerate(inputs):
        with torch.no_grad():
            y = module(torch.from_numpy(x)).numpy()
        _npy(out / name / f"input{n}.npy", x)
        _npy(out / name / f"output{n}.npy", y)
        cases.append({"inputs": [f"{name}/input{n}.npy"], "outputs": [f"{name}/output{n}.npy"]})
    return Entry(name, source, "main", cases, weights, "")


def _hf_module(name: str, scale: float, tokens: int):
    """A HuggingFace model from a config, its ``last_hidden_state`` of token ids as the output."""
    import torch
    try:
        import transformers
    except ImportError:
        raise SystemExit(f"corpus: {name} needs transformers: "
                         ".venv/bin/python -m pip install -r bench/requirements-hf.txt") from None
    d = 4 * max(1, round(8 * scale))
    if name == "hf_bert":
        model = transformers.BertModel(transformers.BertConfig(
            hidden_size=d, num_hidden_layers=2, num_attention_heads=4, intermediate_size=4 * d,
            vocab_size=HF_VOCABULARY, max_position_embeddings=tokens))
    else:
        model = transformers.GPT2Model(transformers.GPT2Config(
            n_embd=d, n_layer=2, n_head=4, vocab_size=HF_VOCABULARY, n_positions=tokens,
            bos_token_id=0, eos_token_id=0))

    class LastHiddenState(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids):
            return self.model(input_ids=ids).last_hidden_state

    return LastHiddenState()


def write_hf(out: Path, name: str, seed: int, scale: float, tokens: int = 16) -> Entry:
    import torch
    module = _hf_module(name, scale, tokens).eval()
    weights = _seed_weights(module, seed)
    ids = np.random.default_rng(seed + 1).integers(0, HF_VOCABULARY, (1, tokens), dtype=np.int64)
    exported = torch.export.export(module, (torch.from_numpy(ids),))
    buffer = io.BytesIO()
    torch.export.save(exported, buffer)
    _write_atomically(out / f"{name}.pt2", buffer.getvalue())
    with torch.no_grad():
        y = module(torch.from_numpy(ids)).numpy()
    _npy(out / name / "input0.npy", ids)
    _npy(out / name / "output0.npy", y)
    return Entry(name, f"{name}.pt2", "main",
                 [{"inputs": [f"{name}/input0.npy"], "outputs": [f"{name}/output0.npy"]}],
                 weights, "")


# --- the corpus -------------------------------------------------------------------

def names(onnx: tuple[str, ...] = DEFAULT_ONNX) -> list[str]:
    return [f"onnx_{light}" for light in onnx] + list(TORCH_MODELS)


def expected_toml(entry: Entry, prefix: str) -> str:
    """``<name>.expected.toml``: the cases with torch's outputs, paths under ``prefix``."""
    lines = [f"# Expected outputs of {entry.source}, written by bench/corpus.py (torch's own).\n"]
    for case in entry.cases:
        quoted = lambda files: ", ".join(f'"@{prefix}/{f}"' for f in files)   # noqa: E731
        lines.append(f'[[case]]\nfunction = "{entry.function}"\ninputs = [{quoted(case["inputs"])}]\n'
                     f'outputs = [{quoted(case["outputs"])}]\natol = {TOLERANCE["atol"]}\n'
                     f'rtol = {TOLERANCE["rtol"]}\n')
    return "\n".join(lines)


def write(out: Path, only: list[str] | None = None, *, seed: int = 0, scale: float = 1.0,
          tokens: int = 16, onnx: tuple[str, ...] = DEFAULT_ONNX,
          root: Path | None = None) -> list[Entry]:
    """Write the corpus (or the models ``only`` names) into ``out``; what was written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = only or names(onnx)
    unknown = [n for n in wanted
               if n not in TORCH_MODELS + HF_MODELS and not n.startswith("onnx_")]
    if unknown:
        raise SystemExit(f"corpus: no model {', '.join(unknown)}; models: {', '.join(names(onnx))}")
    prefix = os.path.relpath(out, root or Path.cwd()).replace(os.sep, "/")
    entries = []
    for name in wanted:
        if name.startswith("onnx_"):
            entries.append(write_onnx(out, name.removeprefix("onnx_"), seed))
        else:
            write_model = write_hf if name in HF_MODELS else write_torch
            entry = write_model(out, name, seed, scale, tokens)
            _write_atomically(out / f"{name}.expected.toml", expected_toml(entry, prefix).encode())
            entries.append(entry)
    return entries


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path, nargs="?", help="folder to write the models into")
    parser.add_argument("--only", default="", help="comma-separated models to write")
    parser.add_argument("--onnx", default=",".join(DEFAULT_ONNX),
                        help="light models to make dense (onnx_<name>)")
    parser.add_argument("--scale", type=float, default=1.0, help="torch models' width multiplier")
    parser.add_argument("--tokens", type=int, default=16,
                        help="torch_transformer's sequence length")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--root", type=Path, default=None,
                        help="the repo the expected outputs' paths are relative to (default: .)")
    parser.add_argument("--list", action="store_true", help="list the models")
    args = parser.parse_args(argv)
    onnx = tuple(n for n in args.onnx.split(",") if n)
    if args.list:
        print("\n".join(names(onnx)))
        return 0
    if args.out is None:
        parser.error("OUTDIR is required")
    only = [n for n in args.only.split(",") if n] or None
    for entry in write(args.out, only, seed=args.seed, scale=args.scale, tokens=args.tokens,
                       onnx=onnx, root=args.root):
        size = (args.out / entry.source).stat().st_size
        print(f"{args.out / entry.source}: {size} bytes, {entry.weights_bytes / 1e6:.2f} MB of "
              f"weights, function @{entry.function}, {len(entry.cases)} case(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
