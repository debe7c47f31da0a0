"""Writes models/layers.mlir: layers of different widths (matmul + bias + activation, then a row norm), then a softmax.

    ./setup.sh python models/generate_layers.py       # models/layers.mlir and models/layers/*.npy
    ./setup.sh python models/generate_layers.py --change-layer 7 --insert-layer 12 --out /tmp/x.mlir

It is the workload of the per-executable codegen cache (bench/codegen_cache.py,
tests/e2e/test_codegen_cache_builds.py). Every layer has a shape no other layer has,
and IREE makes two executables of each (the matmul with bias and activation;
the row norm), plus the softmax: 41 distinct executables for 20 layers.
``--change-layer K`` gives layer K a leaky relu (one executable changes);
``--insert-layer K`` inserts a square layer before layer K (the executables
after it are renumbered, their content unchanged).

Weights and biases are arguments and the batch is dynamic, so IREE passes
buffer offsets as push constants: with static shapes it would fold them into
the executables as constants, and inserting a layer would change every
executable after it. The example input, weights and expected output (numpy,
float64) go to ``<out without .mlir>/*.npy``, and the case reading them to
``<out without .mlir>.expected.toml`` (its paths assume ``--out`` in models/).

Not for: anything but this synthetic model.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

LAYERS = 20                                        # of models/layers.mlir: 4 -> 5 -> ... -> 24 wide
BATCH = 3                                          # of the example input; the model takes any


@dataclass(frozen=True)
class Layer:
    width_in: int
    width_out: int
    seed: int
    activation: str = "relu"                       # or "leaky_relu"

    def weights(self) -> np.ndarray:
        r, c = np.meshgrid(np.arange(self.width_in), np.arange(self.width_out), indexing="ij")
        return ((r * 7 + c * 5 + 3 * self.seed) % 9 - 4).astype(np.float32) / 8

    def bias(self) -> np.ndarray:
        return ((np.arange(self.width_out) * 3 + self.seed) % 5 - 2).astype(np.float32) / 16

    def apply(self, x: np.ndarray) -> np.ndarray:
        v = x @ self.weights().astype(np.float64) + self.bias()
        h = np.maximum(v, 0) if self.activation == "relu" else np.maximum(v, v / 8)
        return h / np.sqrt(1 + (h * h).sum(axis=1, keepdims=True) / self.width_out)


def layers(change: int | None = None, insert: int | None = None,
           count: int = LAYERS) -> list[Layer]:
    """The stack of ``count`` layers (widths 4 -> 5 -> ... -> 4 + count: 2 x count + 1
    executables), layer ``change`` leaky, a square layer inserted before layer ``insert``."""
    widths = tuple(4 + i for i in range(count + 1))
    stack = [Layer(a, b, i) for i, (a, b) in enumerate(zip(widths, widths[1:]))]
    if change is not None:
        old = stack[change]
        stack[change] = Layer(old.width_in, old.width_out, old.seed, "leaky_relu")
    if insert is not None:
        width = stack[insert].width_in
        stack.insert(insert, Layer(width, width, 100 + insert))
    return stack


_ROWS = "affine_map<(i, j) -> (i)>"
_COLUMNS = "affine_map<(i, j) -> (j)>"
_ALL = "affine_map<(i, j) -> (i, j)>"
_PARALLEL = '["parallel", "parallel"]'


def _layer_mlir(n: int, layer: Layer, x: str) -> list[str]:
    a, b = layer.width_in, layer.width_out
    t, rows = f"tensor<?x{b}xf32>", "tensor<?xf32>"
    activation = (["    %r = arith.maximumf %s, %zero : f32"] if layer.activation == "relu" else
                  ["    %q = arith.mulf %s, %eighth : f32", "    %r = arith.maximumf %s, %q : f32"])
    return [
        f"  %e{n} = tensor.empty(%n) : {t}",
        f"  %f{n} = linalg.fill ins(%zero : f32) outs(%e{n} : {t}) -> {t}",
        f"  %m{n} = linalg.matmul ins({x}, %w{n} : tensor<?x{a}xf32>, tensor<{a}x{b}xf32>) "
        f"outs(%f{n} : {t}) -> {t}",
        f"  %h{n} = linalg.generic {{indexing_maps = [{_ALL}, {_COLUMNS}, {_ALL}], "
        f"iterator_types = {_PARALLEL}}} ins(%m{n}, %b{n} : {t}, tensor<{b}xf32>) "
        f"outs(%e{n} : {t}) {{",
        "  ^bb0(%v: f32, %c: f32, %o: f32):",
        "    %s = arith.addf %v, %c : f32",
        *activation,
        "    linalg.yield %r : f32",
        f"  }} -> {t}",
        f"  %se{n} = tensor.empty(%n) : {rows}",
        f"  %sf{n} = linalg.fill ins(%zero : f32) outs(%se{n} : {rows}) -> {rows}",
        f"  %ss{n} = linalg.generic {{indexing_maps = [{_ALL}, {_ROWS}], iterator_types = "
        f"[\"parallel\", \"reduction\"]}} ins(%h{n} : {t}) outs(%sf{n} : {rows}) {{",
        "  ^bb0(%v: f32, %o: f32):",
        "    %q = arith.mulf %v, %v : f32",
        "    %s = arith.addf %q, %o : f32",
        "    linalg.yield %s : f32",
        f"  }} -> {rows}",
        f"  %g{n} = linalg.generic {{indexing_maps = [{_ALL}, {_ROWS}, {_ALL}], "
        f"iterator_types = {_PARALLEL}}} ins(%h{n}, %ss{n} : {t}, {rows}) outs(%e{n} : {t}) {{",
        "  ^bb0(%v: f32, %s: f32, %o: f32):",
        f"    %d = arith.constant {1 / b!r} : f32",
        "    %m = arith.mulf %s, %d : f32",
        "    %p = arith.addf %m, %one : f32",
        "    %r = math.rsqrt %p : f32",
        "    %y = arith.mulf %v, %r : f32",
        "    linalg.yield %y : f32",
        f"  }} -> {t}",
    ]


def model_mlir(stack: list[Layer]) -> str:
    first, last = stack[0].width_in, stack[-1].width_out
    arguments = [f"%x: tensor<?x{first}xf32>"] + [
        f"%w{n}: tensor<{l.width_in}x{l.width_out}xf32>, %b{n}: tensor<{l.width_out}xf32>"
        for n, l in enumerate(stack)]
    out = f"tensor<?x{last}xf32>"
    lines = [
        "// Generated by models/generate_layers.py; do not edit.",
        f"// {len(stack)} layers of different widths: relu(x @ w + b), each row scaled by",
        "// 1 / sqrt(1 + mean(row^2)); then a softmax.",
        f"func.func @main({', '.join(arguments)}) -> {out} {{",
        "  %zero = arith.constant 0.0 : f32",
        "  %one = arith.constant 1.0 : f32",
        "  %eighth = arith.constant 0.125 : f32",
        "  %c0 = arith.constant 0 : index",
        f"  %n = tensor.dim %x, %c0 : tensor<?x{first}xf32>",
    ]
    x = "%x"
    for n, layer in enumerate(stack):
        lines += _layer_mlir(n, layer, x)
        x = f"%g{n}"
    lines += [f"  %se = tensor.empty(%n) : {out}",
              f"  %sm = linalg.softmax dimension(1) ins({x} : {out}) outs(%se : {out}) -> {out}",
              f"  return %sm : {out}", "}", ""]
    return "\n".join(lines)


def example_input(stack: list[Layer]) -> np.ndarray:
    i, j = np.meshgrid(np.arange(BATCH), np.arange(stack[0].width_in), indexing="ij")
    return (((i * 5 + j * 3) % 7 - 3) / 2).astype(np.float32)


def expected_output(stack: list[Layer], x: np.ndarray) -> np.ndarray:
    h = x.astype(np.float64)
    for layer in stack:
        h = layer.apply(h)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def arguments(stack: list[Layer], x: np.ndarray) -> dict[str, np.ndarray]:
    """The model's arguments in order, by file stem: x, then each layer's weights and bias."""
    named = {"x": x}
    for n, layer in enumerate(stack):
        named[f"w{n:02}"] = layer.weights()
        named[f"b{n:02}"] = layer.bias()
    return named


def expected_toml(folder: str, names) -> str:
    inputs = "".join(f'  "@{folder}/{name}.npy",\n' for name in names)
    return ("# Expected outputs of the model generate_layers.py writes; generated with it.\n"
            "[[case]]\n"
            'function = "main"\n'
            f"inputs = [\n{inputs}]\n"
            f'outputs = ["@{folder}/out.npy"]\n'
            "atol = 1e-5\n")


def write(out: Path, stack: list[Layer], data: bool = True) -> None:
    """The model; with ``data``, its arguments, expected output and <name>.expected.toml.

    iree-run-module reads one array per .npy file, so each argument has its own.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(model_mlir(stack))
    if not data:
        return
    folder = out.with_suffix("")
    folder.mkdir(exist_ok=True)
    x = example_input(stack)
    named = arguments(stack, x)
    for name, array in named.items():
        np.save(folder / f"{name}.npy", array)
    np.save(folder / "out.npy", expected_output(stack, x))
    relative = out.parent.name + "/" + folder.name
    out.with_suffix(".expected.toml").write_text(expected_toml(relative, named))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("layers.mlir"))
    parser.add_argument("--change-layer", type=int, help="give layer K a leaky relu")
    parser.add_argument("--insert-layer", type=int, help="insert a square layer before layer K")
    parser.add_argument("--no-data", action="store_true", help="write the model only")
    args = parser.parse_args()
    write(args.out, layers(args.change_layer, args.insert_layer), not args.no_data)


if __name__ == "__main__":
    main()
