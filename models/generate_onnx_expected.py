"""Writes the expected outputs of the demo's ONNX models: what IREE's plain compile computes for them.

    ./setup.sh python models/generate_onnx_expected.py                 # squeezenet bvlc_alexnet
    ./setup.sh python models/generate_onnx_expected.py squeezenet

For each ``models/<name>.onnx`` (copied by ``models/fetch_onnx_models.py
--strip-softmax``): imports it as the build does (``iree-import-onnx``, opset
17), compiles it for llvm-cpu with the flags the build gives that target and
no substitution, runs it with ``iree-run-module`` on the example input and
writes what it returns to ``models/<name>/output.npy`` and the case reading
it to ``models/<name>.expected.toml``.

The example input, ``models/onnx_input/<shape>.npy``, is seeded uniform noise
in [-1, 1): the light models' weights are all 0.02, so every channel after
the first convolution is the same and only the input's variation from pixel
to pixel reaches the logits; a kernel that reads a neighbouring pixel, or a
tensor at the wrong offset, changes them.

The tolerances cover what the other target (Vulkan) computes with IREE's own
kernels (sums in another order): this repo's hand kernels compute what
IREE's do, so a case fails only for a kernel that computes something else.

Not for: models other than the demo's ONNX networks.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

MODELS = Path(__file__).resolve().parent
REPO = MODELS.parent
sys.path.insert(0, str(REPO / "site_scons"))
from iree_kernels.core import toolchains  # noqa: E402
from iree_kernels.project.manifest import DEFAULT_OPSET  # noqa: E402
from iree_kernels.ir.targets import REPRODUCIBLE_FLAGS, TARGETS  # noqa: E402

DEFAULT = ("squeezenet", "bvlc_alexnet")
SEED = 16
TOLERANCE = {"atol": 1e-4, "rtol": 1e-5}
# On the H200, CUDA sums alexnet's logits (4.7e11, the weights are splats) in another order
# than llvm-cpu: 2.7e-5 apart.
MODEL_TOLERANCE = {"bvlc_alexnet": {"atol": 1e-4, "rtol": 1e-4}}
# Lavapipe takes over ten minutes for IREE's SPIR-V of squeezenet (2 cores): its case is
# checked on llvm-cpu in CI; tests/gpu runs its Vulkan module on the GPU machine.
CASE_TARGETS = {"squeezenet": '\ntargets = ["llvm-cpu"]   # see models/generate_onnx_expected.py'}
TEMPLATE = """\
# Expected outputs of models/{name}.onnx, written by models/generate_onnx_expected.py:
# what IREE's plain compile (llvm-cpu, no substitution) returns for the seeded-noise
# input. "scons check" runs it with the hand kernels of kernels/onnx.toml in.

[[case]]
function = "{name}"
inputs = ["@{input}"]
outputs = ["@{output}"]
atol = {atol}
rtol = {rtol}{targets}
"""


def graph_input_shape(source: Path) -> tuple[int, ...]:
    import onnx
    graph = onnx.load(source).graph
    weights = {i.name for i in graph.initializer}
    inputs = [i for i in graph.input if i.name not in weights]
    if len(inputs) != 1:
        raise SystemExit(f"{source}: expected one input, found {[i.name for i in inputs]}")
    return tuple(d.dim_value for d in inputs[0].type.tensor_type.shape.dim)


def example_input(shape: tuple[int, ...]) -> Path:
    path = MODELS / "onnx_input" / ("x".join(map(str, shape)) + ".npy")
    if not path.exists():
        path.parent.mkdir(exist_ok=True)
        noise = np.random.default_rng(SEED).uniform(-1, 1, shape).astype(np.float32)
        np.save(path, noise)
    return path


def plain_output(name: str, source: Path, example: Path, scratch: Path) -> np.ndarray:
    imported, module, out = scratch / f"{name}.mlir", scratch / f"{name}.vmfb", scratch / "out.npy"
    toolchains.run([sys.executable, "-m", "iree.compiler.tools.import_onnx", str(source),
                    f"--opset-version={DEFAULT_OPSET}", "-o", str(imported)],
                   doing=f"import {source.name}")
    llvm_cpu = TARGETS["llvm-cpu"]
    toolchains.run([toolchains.iree_compile(), str(imported), *llvm_cpu.compile_flags,
                    *REPRODUCIBLE_FLAGS, "-o", str(module)], doing=f"compile {name}")
    toolchains.run([toolchains.iree_tool("iree-run-module"), f"--module={module}",
                    f"--device={llvm_cpu.run_device}", f"--function={name}",
                    f"--input=@{example}", f"--output=@{out}"], doing=f"run {name}")
    return np.load(out)


def generate(name: str) -> None:
    source = MODELS / f"{name}.onnx"
    example = example_input(graph_input_shape(source))
    with tempfile.TemporaryDirectory() as scratch:
        output = plain_output(name, source, example, Path(scratch))
    folder = MODELS / name
    folder.mkdir(exist_ok=True)
    np.save(folder / "output.npy", output)
    relative = {k: p.relative_to(REPO).as_posix()
                for k, p in (("input", example), ("output", folder / "output.npy"))}
    (MODELS / f"{name}.expected.toml").write_text(
        TEMPLATE.format(name=name, targets=CASE_TARGETS.get(name, ""), **relative,
                        **MODEL_TOLERANCE.get(name, TOLERANCE)))
    print(f"models/{name}.expected.toml: output {output.dtype}{list(output.shape)}, "
          f"from {output.min():.9g} to {output.max():.9g}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(DEFAULT))
    for name in parser.parse_args(argv).names:
        generate(name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
