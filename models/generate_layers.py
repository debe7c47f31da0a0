"""Writes models/layers.mlir: a stack of matmul + bias + activation layers of different widths, then a softmax.

    ./setup.sh python models/generate_layers.py                 # models/layers.mlir + models/layers/*.npy
    ./setup.sh python models/generate_layers.py --change-layer 7 --insert-layer 12 --out /tmp/x.mlir

Every layer has a shape no other layer has, so IREE keeps one executable per
layer and per step it does not fuse, and the model has many distinct
executables: it is the workload of the per-executable codegen cache
(bench/codegen_cache.py). ``--change-layer K`` gives layer K another
activation (one executable changes); ``--insert-layer K`` inserts a square
layer before layer K (the executables after it are renumbered). Weights and
biases are small exact constants written into the model; the input and the
expected output (computed here with numpy) go to ``<out stem>/x.npy`` and
``out.npy``. Not for: anything but this synthetic model.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

BATCH = 4
WIDTHS = tuple(8 + 4 * i for i in range(21))      # 20 layers: 8 -> 12 -> ... -> 88
GAIN = 1.35


@dataclass(frozen=True)
class Layer:
    width_in: int
    width_out: int
    seed: int
    activation: str = "relu"                       # or "leaky_relu"

    @property
    def scale(self) -> float:
        """Keeps activations of order 1 through the stack (an f32 value, printed exactly)."""
        return float(np.float32(GAIN / np.sqrt(self.width_in) / 4))

    def weights(self) -> np.ndarray:
        r, c = np.meshgrid(np.arange(self.width_in), np.arange(self.width_out), indexing="ij")
        k = ((r * 7 + c * 5 + 3 * self.seed) % 9 - 4).astype(np.float32)
        return k * np.float32(self.scale)

    def bias(self) -> np.ndarray:
        c = np.arange(self.width_out)
        return (((c * 3 + self.seed) % 5 - 2) / 16).astype(np.float32)

    def apply(self, x: np.ndarray) -> np.ndarray:
        v = x @ self.weights().astype(np.float64) + self.bias()
        return np.maximum(v, 0) if self.activation == "relu" else np.maximum(v, v / 8)


def layers(change: int | None = None, insert: int | None = None) -> list[Layer]:
    stack = [Layer(a, b, i) for i, (a, b) in enumerate(zip(WIDTHS, WIDTHS[1:]))]
    if change is not None:
        old = stack[change]
        stack[change] = Layer(old.width_in, old.width_out, old.seed, "leaky_relu")
    if insert is not None:
        width = stack[insert].width_in
        stack.insert(insert, Layer(width, width, 100 + insert))
    return stack


def _floats(values) -> str:
    return "[" + ", ".join(repr(float(v)) for v in values) + "]"


def _weights_mlir(n: int, layer: Layer) -> list[str]:
    """The weights, computed in the model from their indices (no large literal)."""
    t = f"tensor<{layer.width_in}x{layer.width_out}xf32>"
    return [
        f"  %we{n} = tensor.empty() : {t}",
        f"  %w{n} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>], "
        f"iterator_types = [\"parallel\", \"parallel\"]}} outs(%we{n} : {t}) {{",
        "  ^bb0(%o: f32):",
        "    %r = linalg.index 0 : index",
        "    %c = linalg.index 1 : index",
        "    %r7 = arith.muli %r, %c7 : index",
        "    %c5 = arith.muli %c, %c5i : index",
        f"    %s = arith.constant {3 * layer.seed} : index",
        "    %t0 = arith.addi %r7, %c5 : index",
        "    %t1 = arith.addi %t0, %s : index",
        "    %m = arith.remui %t1, %c9 : index",
        "    %i = arith.index_cast %m : index to i32",
        "    %f = arith.sitofp %i : i32 to f32",
        "    %k = arith.subf %f, %four : f32",
        f"    %scale = arith.constant {layer.scale!r} : f32",
        "    %w = arith.mulf %k, %scale : f32",
        "    linalg.yield %w : f32",
        f"  }} -> {t}",
    ]


def _layer_mlir(n: int, layer: Layer, x: str) -> list[str]:
    a, b = layer.width_in, layer.width_out
    t = f"tensor<{BATCH}x{b}xf32>"
    body = ("%r = arith.maximumf %s, %zero : f32" if layer.activation == "relu" else
            "%q = arith.mulf %s, %eighth : f32\n    %r = arith.maximumf %s, %q : f32")
    return _weights_mlir(n, layer) + [
        f"  %b{n} = arith.constant dense<{_floats(layer.bias())}> : tensor<{b}xf32>",
        f"  %e{n} = tensor.empty() : {t}",
        f"  %f{n} = linalg.fill ins(%zero : f32) outs(%e{n} : {t}) -> {t}",
        f"  %m{n} = linalg.matmul ins({x}, %w{n} : tensor<{BATCH}x{a}xf32>, tensor<{a}x{b}xf32>) "
        f"outs(%f{n} : {t}) -> {t}",
        f"  %h{n} = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, "
        f"affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = "
        f"[\"parallel\", \"parallel\"]}} ins(%m{n}, %b{n} : {t}, tensor<{b}xf32>) "
        f"outs(%e{n} : {t}) {{",
        "  ^bb0(%v: f32, %c: f32, %o: f32):",
        "    %s = arith.addf %v, %c : f32",
        f"    {body}",
        "    linalg.yield %r : f32",
        f"  }} -> {t}",
    ]


def _softmax_mlir(x: str, width: int) -> list[str]:
    t = f"tensor<{BATCH}x{width}xf32>"
    return [
        f"  %se = tensor.empty() : {t}",
        f"  %sm = linalg.softmax dimension(1) ins({x} : {t}) outs(%se : {t}) -> {t}",
    ]


def model_mlir(stack: list[Layer]) -> str:
    first, last = stack[0].width_in, stack[-1].width_out
    lines = [
        "// Generated by models/generate_layers.py; do not edit.",
        f"// {len(stack)} matmul + bias + activation layers of different widths, then a softmax.",
        f"func.func @main(%x: tensor<{BATCH}x{first}xf32>) -> tensor<{BATCH}x{last}xf32> {{",
        "  %zero = arith.constant 0.0 : f32",
        "  %four = arith.constant 4.0 : f32",
        "  %eighth = arith.constant 0.125 : f32",
        "  %c5i = arith.constant 5 : index",
        "  %c7 = arith.constant 7 : index",
        "  %c9 = arith.constant 9 : index",
    ]
    x = "%x"
    for n, layer in enumerate(stack):
        lines += _layer_mlir(n, layer, x)
        x = f"%h{n}"
    lines += _softmax_mlir(x, last)
    lines += [f"  return %sm : tensor<{BATCH}x{last}xf32>", "}", ""]
    return "\n".join(lines)


def example_input(stack: list[Layer]) -> np.ndarray:
    i, j = np.meshgrid(np.arange(BATCH), np.arange(stack[0].width_in), indexing="ij")
    return (((i * 5 + j * 3) % 7 - 3) / 4).astype(np.float32)


def expected_output(stack: list[Layer], x: np.ndarray) -> np.ndarray:
    h = x.astype(np.float64)
    for layer in stack:
        h = layer.apply(h)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


def write(out: Path, stack: list[Layer], data: bool = True) -> None:
    out.write_text(model_mlir(stack))
    if data:
        folder = out.with_suffix("")
        folder.mkdir(exist_ok=True)
        x = example_input(stack)
        np.save(folder / "x.npy", x)
        np.save(folder / "out.npy", expected_output(stack, x))


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
