"""Substitutions selected by export-name glob or fingerprint follow their computation when dispatches renumber.

The model is a small stack of generate_layers.py's layers (dynamic batch, so
buffer offsets are push constants and an executable's text does not depend on
where it is in the program). Inserting a layer renumbers the executables
after it; the kernel, a dumped copy of the last layer's row norm with its
1/width constant made 1, must still replace that row norm, which the numbers
iree-run-module computes show against numpy's.
"""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from conftest import REPO, run_module
from iree_kernels.check import runtime
from iree_kernels.core import toolchains
from models.generate_layers import Layer, arguments, example_input, model_mlir


MODEL = """
[models.stack]
source = "models/stack.mlir"
targets = ["llvm-cpu"]
"""
SELECTORS = {"export": 'export = "*_reduction_Dx7_f32"', "fingerprint": 'fingerprint = "{print}"'}


def layers(inserted: bool) -> list[Layer]:
    stack = [Layer(4, 5, 0), Layer(5, 6, 1), Layer(6, 7, 2)]
    if inserted:
        stack.insert(1, Layer(5, 5, 100))
    return stack


def expected(stack: list[Layer], x: np.ndarray, edited: bool) -> np.ndarray:
    """The model's output in float64; ``edited``: the last row norm divides by 1, not its width."""
    h = x.astype(np.float64)
    for n, layer in enumerate(stack):
        if edited and n == len(stack) - 1:
            r = np.maximum(h @ layer.weights().astype(np.float64) + layer.bias(), 0)
            h = r / np.sqrt(1 + (r * r).sum(axis=1, keepdims=True))
        else:
            h = layer.apply(h)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def write_model(project, inserted: bool) -> list[Layer]:
    stack = layers(inserted)
    project.write("models/stack.mlir", model_mlir(stack))
    return stack


def outputs(project, stack: list[Layer]) -> np.ndarray:
    inputs = []
    for name, array in arguments(stack, example_input(stack)).items():
        path = project.root / "inputs" / f"{name}.npy"
        path.parent.mkdir(exist_ok=True)
        np.save(path, array)
        inputs.append(f"--input=@{path}")
    out = project.root / "inputs" / "out.npy"
    subprocess.run([toolchains.iree_tool("iree-run-module"),
                    f"--module={project.root / 'build/llvm-cpu/stack.vmfb'}",
                    "--device=local-sync", "--function=main", *inputs, f"--output=@{out}"],
                   check=True, capture_output=True, text=True)
    return np.load(out)


def listing(project) -> dict[str, dict[str, str]]:
    """scons dump's executables.txt: per executable, its fields (export, fingerprint, ...)."""
    found, current = {}, None
    for line in project.read("build/llvm-cpu/stack/dump/executables.txt").splitlines():
        if line and not line.startswith((" ", "#")):
            current = found.setdefault(line, {})
        elif line.startswith("  ") and current is not None:
            key, _, value = line.strip().partition(" ")
            current.setdefault(key, value.strip())
    return found


def landed(project) -> dict:
    (record,) = json.loads(project.read("build/llvm-cpu/stack/substitutions.json"))["substitutions"]
    return record


@pytest.mark.parametrize("selector", sorted(SELECTORS))
def test_selector_follows_renumbered_dispatch(project, selector):
    stack = write_model(project, inserted=False)
    project.write("kernels/demo.toml", MODEL)
    project.scons("dump", "IREE_TARGETS=llvm-cpu")
    executables = listing(project)
    norm = executables["main_dispatch_5"]
    assert norm["export"] == "main_dispatch_5_reduction_Dx7_f32"
    assert norm["fingerprint"].startswith("sha256:") and len(norm["fingerprint"]) == 7 + 16
    assert len({e["fingerprint"] for e in executables.values()}) == len(executables)
    kernel = project.read("build/llvm-cpu/stack/dump/sources/module_main_dispatch_5.mlir")
    assert "0.142857149 : f32" in kernel
    project.write("kernels/norm.mlir", kernel.replace("0.142857149 : f32", "1.000000e+00 : f32"))
    entry = SELECTORS[selector].format(print=norm["fingerprint"])
    project.write("kernels/demo.toml", MODEL + f"""
[[substitutions]]
model = "stack"
target = "llvm-cpu"
{entry}
file = "kernels/norm.mlir"
""")
    project.scons("IREE_TARGETS=llvm-cpu")
    record = landed(project)
    assert (record["executable"], record["export"]) == ("main_dispatch_5",
                                                        "main_dispatch_5_reduction_Dx7_f32")
    assert record["fingerprint"].startswith(norm["fingerprint"])
    x = example_input(stack)
    assert np.abs(expected(stack, x, True) - expected(stack, x, False)).max() > 1e-3
    np.testing.assert_allclose(outputs(project, stack), expected(stack, x, True), atol=1e-5)
    assert project.scons("IREE_TARGETS=llvm-cpu", "--question", expect_ok=False).returncode == 0

    # One more layer: the row norm is now main_dispatch_7, and the same kernel replaces it.
    stack = write_model(project, inserted=True)
    build = project.scons("IREE_TARGETS=llvm-cpu")
    assert build.ran("RESOLVE") == ["build/llvm-cpu/stack/resolved.json"]
    record = landed(project)
    assert (record["executable"], record["export"]) == ("main_dispatch_7",
                                                        "main_dispatch_7_reduction_Dx7_f32")
    assert record["fingerprint"].startswith(norm["fingerprint"])
    x = example_input(stack)
    np.testing.assert_allclose(outputs(project, stack), expected(stack, x, True), atol=1e-5)

    # A kernel edit runs neither the front end nor the resolution.
    project.write("kernels/norm.mlir", "// edited\n" + project.read("kernels/norm.mlir"))
    build = project.scons("IREE_TARGETS=llvm-cpu")
    assert build.ran("FRONTEND") == [] and build.ran("RESOLVE") == []
    assert build.ran("RENAME") and build.ran("BINARY")            # relinked

    # The numbered name with the fingerprint it had: reported as having moved.
    project.write("kernels/demo.toml", MODEL + f"""
[[substitutions]]
model = "stack"
target = "llvm-cpu"
executable = "main_dispatch_5"
fingerprint = "{norm['fingerprint']}"
file = "kernels/norm.mlir"
""")
    build = project.scons("IREE_TARGETS=llvm-cpu", expect_ok=False)
    assert build.returncode != 0 and "Traceback" not in build.output
    first_error = next(line for line in build.output.splitlines() if line.startswith("scons: ***"))
    assert ("kernels/demo.toml:10: [[substitutions]] #1 (executable 'main_dispatch_5' of "
            "stack/llvm-cpu): field 'fingerprint': executable 'main_dispatch_5' has moved: it no "
            f"longer has fingerprint {norm['fingerprint']}") in first_error, build.output
    assert ("the computation with that fingerprint is now executable main_dispatch_7 "
            "(main_dispatch_7_reduction_Dx7_f32)") in first_error, build.output


def test_a_fingerprint_never_seen_is_a_mistake_and_one_seen_before_a_changed_computation(project):
    write_model(project, inserted=False)
    project.write("kernels/demo.toml", MODEL)
    project.scons("dump", "IREE_TARGETS=llvm-cpu")
    executables = listing(project)
    norm = executables["main_dispatch_5"]["fingerprint"]
    project.write("kernels/norm.mlir",
                  project.read("build/llvm-cpu/stack/dump/sources/module_main_dispatch_5.mlir"))
    entry = MODEL + """
[[substitutions]]
model = "stack"
target = "llvm-cpu"
executable = "main_dispatch_5"
fingerprint = "{print}"
file = "kernels/norm.mlir"
"""
    mistyped = norm[:-1] + ("0" if norm[-1] != "0" else "1")
    project.write("kernels/demo.toml", entry.format(print=mistyped))
    build = project.scons("IREE_TARGETS=llvm-cpu", expect_ok=False)
    error = next(line for line in build.output.splitlines() if line.startswith("scons: ***"))
    assert "has moved" not in error and "changed" not in error, error
    assert (f"field 'fingerprint': no executable of model 'stack' on llvm-cpu has fingerprint "
            f"{mistyped} (executable 'main_dispatch_5' has {norm}), nor did one in an earlier "
            "build (mistyped? `scons dump` lists them); the fingerprints of its executables: "
            f"main_dispatch_0 ({executables['main_dispatch_0']['export']}, "
            f"{executables['main_dispatch_0']['fingerprint']})") in error, error

    # Built once with the right fingerprint, then the row norm computes something else.
    project.write("kernels/demo.toml", entry.format(print=norm))
    project.scons("IREE_TARGETS=llvm-cpu")
    project.write("models/stack.mlir", model_mlir([Layer(4, 5, 0), Layer(5, 6, 1), Layer(6, 8, 2)]))
    build = project.scons("IREE_TARGETS=llvm-cpu", expect_ok=False)
    error = next(line for line in build.output.splitlines() if line.startswith("scons: ***"))
    assert (f"field 'fingerprint': executable 'main_dispatch_5' has moved: it no longer has "
            f"fingerprint {norm}") in error, error
    assert error.endswith("no executable has that fingerprint now: what it computes changed"), error


needs_clang = pytest.mark.skipif(toolchains.on_path("clang") is None, reason="no clang")
needs_vulkan = pytest.mark.skipif(
    toolchains.on_path("glslangValidator") is None or
    "vulkan" not in runtime.available_drivers(toolchains.iree_tool("iree-run-module")),
    reason="no glslangValidator or no Vulkan device")
SAXPY = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu", "vulkan"]

[[substitutions]]
model = "saxpy"
target = "{target}"
export = "main_dispatch_*"
file = "{file}"
mode = "wrapped"
workgroup_count = ["ceildiv(w0, {per_group})"]
"""
N = 3000


def saxpy(project, target: str, file: str, per_group: int, more: str = "") -> list[float]:
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.write("kernels/demo.toml", SAXPY.format(target=target, file=file,
                                                    per_group=per_group) + more)
    build = project.scons(f"IREE_TARGETS={target}")
    assert build.ran("RESOLVE") == [f"build/{target}/saxpy/resolved.json"]
    assert landed_in(project, target)["executable"] == "main_dispatch_0"
    device = "local-sync" if target == "llvm-cpu" else "vulkan"
    out = run_module(project.root / f"build/{target}/saxpy.vmfb", device, "main",
                     [f"{N}xf32=3", f"{N}xf32=1"])
    return [float(v) for v in out.split("=", 1)[1].split()]


def landed_in(project, target: str) -> dict:
    (record,) = json.loads(project.read(f"build/{target}/saxpy/substitutions.json"))["substitutions"]
    return record


@needs_clang
def test_wrapped_c_kernel_selected_by_export(project):
    project.write("kernels/saxpy.c", (REPO / "kernels/cpu/saxpy.c").read_text()
                  .replace("2.0f * x[i] + y[i]", "x[i] - y[i] * 2.0f"))
    assert saxpy(project, "llvm-cpu", "kernels/saxpy.c", 1024) == [1.0] * N
    wrapper = landed_in(project, "llvm-cpu")["wrapper"]
    assert wrapper.startswith("build/llvm-cpu/saxpy/export_main_dispatch__-")
    assert "hal.executable.export public @main_dispatch_0_" in project.read(wrapper)


@needs_vulkan
def test_glsl_kernel_selected_by_export_gets_the_export_as_entry_point(project):
    project.copy(REPO / "kernels/vulkan/saxpy_128.glsl", "kernels/saxpy.glsl")
    out = saxpy(project, "vulkan", "kernels/saxpy.glsl", 128, "workgroup_size = [128]\n")
    assert out == [7.0] * N
    assert landed_in(project, "vulkan")["export"].startswith("main_dispatch_0_")
