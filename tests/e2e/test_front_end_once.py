"""Modules compiled from the executable-sources program equal what iree-compile's own substitution gives.

The build runs IREE's front end once per model and target and applies source
and wrapped substitutions (and codegen-cache stand-ins) to that program itself.
For every demo model, each target that runs here, without the codegen cache:
the module computes, case by case, bit for bit what
``iree-compile model.mlir @options.flags @substitutions.flags`` computes; on
llvm-cpu it is that module byte for byte. The real ONNX networks
(kernels/onnx.toml) are compared on llvm-cpu only: they take most of a demo
build. With the cache, test_codegen_cache_builds compares every demo model,
ONNX networks included, bit for bit with these modules' build (cache off).
"""
from __future__ import annotations


import numpy as np
import pytest

from conftest import REPO, case_outputs, linked_demo, reference_module
from iree_kernels.check import expected_outputs, runtime
from iree_kernels.core import toolchains
from iree_kernels.project.manifest import load_project

RUN_MODULE = toolchains.iree_tool("iree-run-module")
DEVICES = {"llvm-cpu": "local-sync", "vulkan": "vulkan"}


def runs_here(target):
    drivers = runtime.available_drivers(RUN_MODULE)
    return pytest.mark.skipif(runtime.device_driver(DEVICES[target]) not in drivers,
                              reason=f"no {target} device here")


@pytest.mark.parametrize("target", [pytest.param(t, marks=runs_here(t)) for t in DEVICES])
def test_every_demo_module_computes_what_iree_compiles_own_substitution_does(
        tmp_path_factory, target, tmp_path):
    byte_for_byte = target == "llvm-cpu"
    # Linked, as iree-compile links (RELINK's modules: tests/e2e/test_relink.py).
    root = linked_demo(tmp_path_factory, target)
    models = load_project(root, sorted((root / "kernels").glob("**/*.toml")))
    substituted = []
    for model in models.models.values():
        if target not in model.targets or not model.expected or \
                model.source.endswith(".onnx") and not byte_for_byte:
            continue
        built = root / f"build/{target}/{model.name}.vmfb"
        reference = reference_module(root, target, model.name, model.source,
                                     tmp_path / f"reference/{model.name}.vmfb")
        if byte_for_byte:
            assert built.read_bytes() == reference.read_bytes(), model.name
        for case in expected_outputs.load_cases(str(root / model.expected), target):
            out = tmp_path / f"{model.name}.npy"
            for a, b in zip(case_outputs(RUN_MODULE, reference, case, DEVICES[target], out, root),
                            case_outputs(RUN_MODULE, built, case, DEVICES[target], out, root)):
                assert a.dtype == b.dtype and np.array_equal(a, b), model.name
        if models.substitutions_for(model.name, target):
            substituted.append(model.name)
    # Source (llvm-cpu mlp), wrapped (saxpy) and object (vulkan) substitutions all compared.
    expected = {"llvm-cpu": {"mlp", "saxpy"}, "vulkan": {"mlp", "elementwise", "saxpy"}}[target]
    if byte_for_byte:
        expected |= {"squeezenet", "bvlc_alexnet"}
    assert expected <= set(substituted)


@pytest.mark.parametrize("relink, first_steps, steps", [
    # Relinked, the model is compiled once, unlinked, its executables dumped on the way.
    ("yes", {"FRONTEND": [], "IREE": ["build/llvm-cpu/mlp/unlinked/mlp.vmfb"]},
     {"BINARY": ["build/llvm-cpu/mlp/relink/main_dispatch_1.bin"],
             "RELINK": ["build/llvm-cpu/mlp.vmfb"], "ASSEMBLE": [], "IREE": []}),
    ("no", {"FRONTEND": ["build/llvm-cpu/mlp/executables.mlir"]},
     {"ASSEMBLE": ["build/llvm-cpu/mlp/module/mlp.mlir"], "IREE": ["build/llvm-cpu/mlp.vmfb"]})])
def test_editing_a_source_kernel_does_not_run_the_front_end_again(project, relink, first_steps,
                                                                   steps):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / "kernels/llvm-cpu/mlp_square_relu.mlir", "kernels/square.mlir")
    project.write("kernels/mlp.toml", '[models.mlp]\nsource = "models/mlp.mlir"\n'
                  'targets = ["llvm-cpu"]\n\n[[substitutions]]\nmodel = "mlp"\n'
                  'target = "llvm-cpu"\nexecutable = "main_dispatch_1"\n'
                  'file = "kernels/square.mlir"\n')
    first = project.scons("EXECUTABLE_CACHE=0", f"RELINK={relink}")
    assert {step: first.ran(step) for step in first_steps} == first_steps
    kernel = project.root / "kernels/square.mlir"
    kernel.write_text(kernel.read_text().replace("%sq = arith.mulf %9, %9 : f32",
                                                 "%sq = arith.addf %9, %9 : f32"))
    edited = project.scons("EXECUTABLE_CACHE=0", f"RELINK={relink}")
    assert edited.ran("FRONTEND") == [] and edited.ran("IREE") == [] or relink == "no"
    assert {step: edited.ran(step) for step in steps} == steps
    assert project.scons("EXECUTABLE_CACHE=0", f"RELINK={relink}", "--question",
                         expect_ok=False).returncode == 0


CONV_MANIFEST = """
[models.conv1x1]
source = "models/conv1x1.onnx"
targets = ["cuda"]
"""
WRAPPED = """
[[substitutions]]
model = "conv1x1"
target = "cuda"
executable = "conv1x1$async_dispatch_0"
file = "kernels/conv1x1_relu.cu"
mode = "wrapped"
workgroup_size = [256]
workgroup_count = ["ceildiv(16 * 3025, 256)"]
"""


@pytest.mark.skipif(toolchains.nvcc() is None, reason="needs nvcc")
@pytest.mark.parametrize("cache", ["0", "cuda"])
def test_a_wrapped_kernel_stands_in_for_an_executable_iree_cannot_compile(project, cache):
    """IREE 3.13's CUDA codegen fails on conv1x1's convolution; the error names it, the kernel
    replaces it. Without the codegen cache (the default) the module is compiled from the model;
    with it, the misses in the cache."""
    project.copy(REPO / "models/conv1x1.onnx", "models/conv1x1.onnx")
    project.copy(REPO / "kernels/cuda/conv1x1_relu.cu", "kernels/conv1x1_relu.cu")
    project.write("kernels/m.toml", CONV_MANIFEST)
    variables = [f"EXECUTABLE_CACHE={cache}"]
    failed = project.scons(*variables, expect_ok=False)
    assert failed.returncode == 2 and "Traceback" not in failed.output
    error = next(line for line in failed.output.splitlines() if line.startswith("scons: ***"))
    step, log = ("conv1x1.vmfb", "compile-errors.log") if cache == "0" else \
        ("conv1x1/module/conv1x1.mlir", "codegen-errors.log")
    assert error == (
        f"scons: *** [build/cuda/{step}] IREE's cuda codegen fails for 1 "
        "executable(s) of model 'conv1x1': conv1x1$async_dispatch_0 (export "
        "conv1x1$async_dispatch_0_reduction_16x3025x64_f32, 2 bindings [0:ro, 1:rw], 0 push "
        "constants): 'func.func' op failed to distribute. A wrapped kernel (mode = \"wrapped\") "
        "replaces an executable without IREE compiling it. IREE's errors: "
        f"build/cuda/conv1x1/{log}")
    assert "failed to distribute" in project.read(f"build/cuda/conv1x1/{log}")
    assert project.scons(*variables, "--question", expect_ok=False).returncode != 0
    project.write("kernels/m.toml", CONV_MANIFEST + WRAPPED)
    built = project.scons(*variables)
    # Relinked: the unlinked module has a placeholder where the wrapper's binary goes.
    assert built.made_modules() == ["build/cuda/conv1x1.vmfb"]
    assert built.ran("RELINK") == ["build/cuda/conv1x1.vmfb"]
    assert built.ran("FRONTEND") == []                 # the model did not change
    if cache == "0":
        # From the model, the placeholder substituted by a flag.
        placeholders = list((project.root / "build/cuda/conv1x1/unlinked").glob(
            "*.placeholder.mlir"))
        assert len(placeholders) == 1 and "dense<[0, 0, 0, 0]>" in placeholders[0].read_text()
    else:
        # Nothing is left for IREE to translate: its compile resumes after translation.
        assert project.read("build/cuda/conv1x1/unlinked/conv1x1.flags") == \
            "--compile-from=executable-targets\n"
    assert project.scons(*variables, "--question", expect_ok=False).returncode == 0
