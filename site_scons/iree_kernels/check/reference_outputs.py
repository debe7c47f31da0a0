"""A model's expected outputs made from IREE's plain llvm-cpu module: seeded inputs, its results.

``scons expected`` writes ``<model>.expected.toml`` and the ``.npy`` files it
names for a model that has none: each public function of the reference module
(the model compiled for llvm-cpu with no substitution) gets inputs drawn from
a seeded generator (floats uniform in [-1, 1), integers in [0, 10)), is run by
iree-run-module, and what it returns becomes the case's outputs. A torch
model's shapes are read from its MLIR (its module declares none), and its
``@main$async`` is left out: it is ``@main`` with fences.

Not for: running modules against expected outputs (``expected_outputs``), or
models whose inputs have dynamic dimensions (their shapes are the author's to
choose: write the case by hand).
"""
from __future__ import annotations

import io
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from iree_kernels.core import processes, toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import link_on_the_way, scratch_folder, write_atomically, write_new
from iree_kernels.core.render import render

SEED = 16
TOLERANCE = {"atol": 1e-4, "rtol": 1e-5}
_ARGUMENT_RE = re.compile(r"%\w+: ([^,()]+(?:<[^>]*>)?)")
_DTYPES = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
           "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
           "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}


@dataclass(frozen=True)
class TensorType:
    shape: tuple[int, ...]
    element: str

    @classmethod
    def parse(cls, text: str, function: str) -> "TensorType":
        found = re.fullmatch(r"tensor<((?:[0-9?]+x)*)(\w+)>", text.strip())
        if not found:
            raise UserError(f"@{function} takes a {text.strip()}, not a tensor: write its "
                            "expected outputs by hand")
        dims = [d for d in found.group(1).split("x") if d]
        if "?" in dims:
            raise UserError(f"@{function} takes a {text.strip()}: its shape is the model "
                            "author's to choose; write its expected outputs by hand")
        return cls(tuple(int(d) for d in dims), found.group(2))


@dataclass(frozen=True)
class Case:
    function: str
    inputs: tuple[str, ...]       # repo-relative .npy paths
    outputs: tuple[str, ...]


@dataclass(frozen=True)
class Signature:
    inputs: tuple[TensorType, ...]
    results: int


def signatures(vmfb: str, model: str | None = None) -> dict[str, Signature]:
    """Each public function of the module: the tensors it takes, how many it returns.

    From IREE's ABI declaration; a torch model's module has none, so its
    functions' are read from the model's MLIR (``model``, a path): ``@main``,
    not ``@main$async``, which takes fences (the same function, asynchronous).
    """
    import iree.runtime as rt

    module = rt.VmModule.mmap(rt.VmInstance(), vmfb)
    names = [n for n in module.function_names if not n.startswith("__")]
    found, undeclared = {}, []
    for name in names:
        declaration = module.lookup_function(name).reflection.get("iree.abi.declaration", "")
        if not declaration:
            undeclared.append(name)
            continue
        arguments, _, results = declaration.partition("->")
        found[name] = Signature(
            tuple(TensorType.parse(t, name) for t in _ARGUMENT_RE.findall(arguments)),
            len(_ARGUMENT_RE.findall(results)))
    if undeclared:
        torch = torch_signatures(model) if model else {}
        for name in undeclared:
            if name in torch:
                found[name] = torch[name]
            elif not (name.endswith(ASYNC) and name.removesuffix(ASYNC) in torch):
                raise UserError(f"{vmfb}: @{name} declares no signature, and the model's MLIR "
                                "holds none for it: write its expected outputs by hand")
    return found


ASYNC = "$async"
_TORCH_FUNCTION_RE = re.compile(r'^\s*func\.func (?:public )?@"?([\w$.-]+)"?\((.*?)\) -> (.*?)'
                                r"(?: attributes \{.*\})? \{$")
_TORCH_TENSOR_RE = re.compile(r"!torch\.vtensor<\[([^\]]*)\],(\w+)>")
_TORCH_ELEMENTS = {"si8": "i8", "si16": "i16", "si32": "i32", "si64": "i64"}


def torch_signatures(model: str) -> dict[str, Signature]:
    """The functions of a torch-mlir program (``!torch.vtensor`` arguments), by name.

    Read line by line up to the resources section (the weights): the
    functions come first.
    """
    found = {}
    with open(model, encoding="utf-8", errors="replace") as text:
        for line in text:
            if line.startswith("{-#"):
                break
            function = _TORCH_FUNCTION_RE.match(line)
            if not function:
                continue
            name, arguments, results = function.groups()
            tensors = []
            for dims, element in _TORCH_TENSOR_RE.findall(arguments):
                shape = "x".join(d.replace("-1", "?") for d in dims.split(",") if d)
                element = _TORCH_ELEMENTS.get(element, element)
                tensors.append(TensorType.parse(f"tensor<{shape}{'x' if shape else ''}"
                                                f"{element}>", name))
            found[name] = Signature(tuple(tensors), len(_TORCH_TENSOR_RE.findall(results)))
    return found


def seeded_input(tensor: TensorType, generator: np.random.Generator) -> np.ndarray:
    """Finite values of a realistic range: uniform [-1, 1) for floats, [0, 10) for integers."""
    if tensor.element == "bf16":
        import ml_dtypes
        return generator.uniform(-1, 1, tensor.shape).astype(ml_dtypes.bfloat16)
    dtype = _DTYPES.get(tensor.element)
    if dtype is None:
        raise UserError(f"inputs of element type {tensor.element} are not generated; write the "
                        "expected outputs by hand")
    if np.issubdtype(dtype, np.floating):
        return generator.uniform(-1, 1, tensor.shape).astype(dtype)
    if dtype is np.bool_:
        return generator.integers(0, 2, tensor.shape).astype(dtype)
    return generator.integers(0, 10, tensor.shape).astype(dtype)


def write(vmfb: str, run_module: str, root: Path, expected: str, source: str,
          seed: int = SEED, timeouts: toolchains.Timeouts | None = None,
          model: str | None = None) -> list[str]:
    """Write ``expected`` (repo-relative) and its .npy files beside it; warnings about what they hold.

    The .npy files go to ``<expected without .expected.toml>/``, one folder per model.
    ``model``: the MLIR the module was compiled from (``signatures``).
    """
    folder = expected.removesuffix(".expected.toml")
    generator = np.random.default_rng(seed)
    cases, warnings = [], []
    with scratch_folder(Path(vmfb).parent, "expected") as scratch:
        for function, signature in signatures(vmfb, model).items():
            inputs = [f"{folder}/{function}.input{n}.npy" for n in range(len(signature.inputs))]
            outputs = [f"{folder}/{function}.output{n}.npy" for n in range(signature.results)]
            _refuse_to_replace(root, inputs + outputs)
            for path, tensor in zip(inputs, signature.inputs):
                _save(Path(scratch, path), seeded_input(tensor, generator))
            _run(run_module, vmfb, function, inputs, outputs, Path(scratch), timeouts)
            for path in outputs:
                values = np.load(Path(scratch, path))
                if values.size > 1 and np.all(values == values.flat[0]):
                    warnings.append(f"every element of {path} is {values.flat[0]}: whatever a "
                                    "kernel computes may give that (a final softmax over splat "
                                    "weights?); check the model's logits instead")
            cases.append(Case(function, tuple(inputs), tuple(outputs)))
        if not cases:
            raise UserError(f"{vmfb} exports no function to run")
        _refuse_to_replace(root, [expected])
        written = [path for case in cases for path in (*case.inputs, *case.outputs)]
        text = render("expected.toml.j2", cases=cases, seed=seed, source=source, **TOLERANCE)
        for path in [*written, expected]:            # the manifest of the case last
            _refuse_to_replace(root, [path])
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            content = text if path == expected else Path(scratch, path).read_bytes()
            try:
                write_new(root / path, content)
            except FileExistsError:
                raise UserError(f"{path} exists already; move it away to write it again") from None
    return warnings


def _refuse_to_replace(root: Path, paths: list[str]) -> None:
    """'scons expected' writes new files only, never through a link."""
    for path in paths:
        linked = link_on_the_way(root, path)
        if linked:
            raise UserError(f"{linked} is a symbolic link; 'scons expected' writes only into "
                            "folders of the repository, never through a link")
        if os.path.lexists(root / path):
            raise UserError(f"{path} exists already; move it away to write it again")


def _run(run_module: str, vmfb: str, function: str, inputs: list[str], outputs: list[str],
         root: Path, timeouts: toolchains.Timeouts | None) -> None:
    argv = [toolchains.real_program(run_module), f"--module={vmfb}", "--device=local-sync",
            f"--function={function}", *(f"--input=@{root / p}" for p in inputs),
            *(f"--output=@{root / p}" for p in outputs)]
    for path in outputs:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
    limit = (timeouts or toolchains.default_timeouts()).of("RUN_TIMEOUT")
    try:
        result = processes.run(argv, limit=limit)
    except processes.TimeLimit:
        raise UserError(f"@{function}: " + toolchains.timeout_message(
            "iree-run-module", limit, "RUN_TIMEOUT")) from None
    if result.returncode != 0:
        raise UserError(f"the reference module fails running @{function}: "
                        f"{(result.stdout + result.stderr).strip()[-2000:]}")


def _save(path: Path, values: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.save(buffer, values)
    write_atomically(path, buffer.getvalue())
