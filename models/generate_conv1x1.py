"""Writes models/conv1x1.onnx: one 1x1 convolution (64 -> 16 channels over 55x55) and a ReLU.

    ./setup.sh python models/generate_conv1x1.py     # models/conv1x1.onnx, conv1x1/*.npy

It is squeezenet's first "squeeze" layer (``light_squeezenet.onnx`` in the onnx
package's test data) alone, with the same splat weights (0.02) and a bias of
0.01. IREE 3.13's CUDA codegen fails on it ("'func.func' op failed to
distribute"); kernels/cuda/conv1x1_relu.cu, substituted wrapped, replaces the
one executable IREE makes of it, so the model builds for CUDA anyway. Its
example input and expected output (numpy, float64, rounded to float32) go to
models/conv1x1/, read by models/conv1x1.expected.toml.

Not for: anything but this demo.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

CHANNELS_IN, CHANNELS_OUT, SIDE = 64, 16, 55
WEIGHT, BIAS = 0.02, 0.01


def model():
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    weights = numpy_helper.from_array(
        np.full((CHANNELS_OUT, CHANNELS_IN, 1, 1), WEIGHT, np.float32), "W")
    bias = numpy_helper.from_array(np.full((CHANNELS_OUT,), BIAS, np.float32), "B")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS_IN, SIDE, SIDE])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, CHANNELS_OUT, SIDE, SIDE])
    graph = helper.make_graph([helper.make_node("Conv", ["x", "W", "B"], ["c"]),
                               helper.make_node("Relu", ["c"], ["y"])],
                              "conv1x1", [x], [y], [weights, bias])
    made = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                             producer_name="models/generate_conv1x1.py")
    onnx.checker.check_model(made)
    return made


def example_input() -> np.ndarray:
    """Values of both signs, so the ReLU matters: channel c, pixel p -> sin(c + p / 7)."""
    c = np.arange(CHANNELS_IN).reshape(-1, 1)
    p = np.arange(SIDE * SIDE).reshape(1, -1)
    return np.sin(c + p / 7.0).reshape(1, CHANNELS_IN, SIDE, SIDE).astype(np.float32)


def expected_output(x: np.ndarray) -> np.ndarray:
    total = x.astype(np.float64).sum(axis=1, keepdims=True) * WEIGHT + BIAS
    return np.maximum(np.repeat(total, CHANNELS_OUT, axis=1), 0).astype(np.float32)


def main() -> None:
    import onnx
    here = Path(__file__).resolve().parent
    onnx.save(model(), here / "conv1x1.onnx")
    (here / "conv1x1").mkdir(exist_ok=True)
    x = example_input()
    np.save(here / "conv1x1/x.npy", x)
    np.save(here / "conv1x1/y.npy", expected_output(x))


if __name__ == "__main__":
    main()
