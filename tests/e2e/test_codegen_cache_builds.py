"""End to end: modules built through the per-executable codegen cache (EXECUTABLE_CACHE=...).

The layers model (models/generate_layers.py) with 6 layers has 13 distinct
executables (models/layers.mlir's 20 layers, 41 executables, are built through the
cache with the rest of the demo in the last tests). A cached module must compute exactly what a plain compile does and link the
binaries a plain compile makes; an edit recompiles only the executables it
changes, also when it renumbers the others; the manifest's substitutions win.
"""
from __future__ import annotations

import concurrent.futures
import os
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import REPO, Project, case_outputs, linked_demo, made_once, run_module
from harness import scons
from iree_kernels.check import expected_outputs, runtime
from iree_kernels.module import codegen_cache
from iree_kernels.core import toolchains
from iree_kernels.project.manifest import load_project
from models import generate_layers

RUN_MODULE = toolchains.iree_tool("iree-run-module")
DEVICES = {"llvm-cpu": "local-sync", "vulkan": "vulkan"}
LAYERS = 6
EXECUTABLES = 2 * LAYERS + 1
MANIFEST = """
[models.layers]
source = "models/layers.mlir"
targets = {targets}
"""


def needs_device(target):
    available = runtime.available_drivers(RUN_MODULE)
    return pytest.mark.skipif(runtime.device_driver(DEVICES[target]) not in available,
                              reason=f"no {target} device here")


def make(project, targets=("vulkan",), **variant):
    generate_layers.write(project.root / "models/layers.mlir",
                          generate_layers.layers(count=LAYERS, **variant))
    project.write("kernels/layers.toml", MANIFEST.format(targets=list(targets)).replace("'", '"'))
    return project


@pytest.fixture
def layers_on_vulkan(tmp_path_factory, tmp_path) -> Project:
    """make()'s repo built through the codegen cache (EXECUTABLE_CACHE=vulkan): built once per
    run, copied for each test."""
    def build(folder):
        make(Project(folder)).scons("EXECUTABLE_CACHE=vulkan")
    return Project.copy_of(made_once(tmp_path_factory, "layers-on-vulkan", build),
                           tmp_path / "repo")


def outputs(project, module: str, device: str) -> np.ndarray:
    """What the module computes for the model's example inputs, as written to .npy."""
    folder = project.root / "models/layers"
    layers = len(list(folder.glob("w*.npy")))
    names = ["x"] + [f"{kind}{n:02}" for n in range(layers) for kind in ("w", "b")]
    out = project.root / "out.npy"
    argv = [RUN_MODULE, f"--module={project.root / module}", f"--device={device}",
            "--function=main", f"--output=@{out}", *[f"--input=@{folder / n}.npy" for n in names]]
    subprocess.run(argv, capture_output=True, text=True, check=True)
    return np.load(out)


def plain_binaries(project, target: str) -> dict[str, bytes]:
    """One binary per executable, from a plain compile that does not link them."""
    folder = project.root / f"plain-binaries-{target}"
    shutil.rmtree(folder, ignore_errors=True)
    subprocess.run([toolchains.iree_compile(), "models/layers.mlir",
                    f"@build/{target}/layers/options.flags", "--iree-hal-link-executables=false",
                    f"--iree-hal-dump-executable-binaries-to={folder}", "-o", os.devnull],
                   cwd=project.root, check=True, capture_output=True)
    return {re.match(r"module_(\w+?_dispatch_\d+)_", f.name).group(1): f.read_bytes()
            for f in folder.iterdir()}


def cached_binaries(project, target: str) -> dict[str, bytes]:
    return codegen_cache.embedded_binaries(
        project.read(f"build/{target}/layers/module/layers.mlir"))


@pytest.mark.parametrize("target", [pytest.param("llvm-cpu", marks=needs_device("llvm-cpu")),
                                    pytest.param("vulkan", marks=needs_device("vulkan"))])
def test_cached_module_computes_what_a_plain_compile_does(project, target):
    make(project, [target])
    cold = project.scons(f"EXECUTABLE_CACHE={target}", "-j2", "check")
    assert len(cold.ran("CODEGEN")) == EXECUTABLES
    # Every executable cached: the module's compile starts after translation.
    assert project.read(f"build/{target}/layers/module/layers.flags") == \
        "--compile-from=executable-targets\n"
    assert "models/layers.expected.toml matched" in cold.output
    project.scons("EXECUTABLE_CACHE=0", "BUILD_DIR=plain")
    cached = outputs(project, f"build/{target}/layers.vmfb", DEVICES[target])
    plain = outputs(project, f"plain/{target}/layers.vmfb", DEVICES[target])
    assert np.array_equal(cached, plain)
    if target == "llvm-cpu":        # the cached translations are linked as IREE links its own
        assert (project.root / f"build/{target}/layers.vmfb").read_bytes() == \
               (project.root / f"plain/{target}/layers.vmfb").read_bytes()
    else:
        assert cached_binaries(project, target) == plain_binaries(project, target)


def test_cached_cuda_kernels_are_the_ones_a_plain_compile_makes(project):
    """Running them needs a GPU (tests/gpu/test_codegen_cache_on_gpu.py); compiling does not."""
    make(project, ["cuda"])
    project.scons("EXECUTABLE_CACHE=cuda", "-j2")
    assert cached_binaries(project, "cuda") == plain_binaries(project, "cuda")


def test_a_second_build_does_nothing(project):
    make(project)
    project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    again = project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    assert again.steps == []
    assert project.scons("EXECUTABLE_CACHE=1", "--question").returncode == 0


def test_changing_one_layer_compiles_one_executable(layers_on_vulkan):
    project = layers_on_vulkan
    make(project, change=3)
    rebuild = project.scons("EXECUTABLE_CACHE=vulkan")
    assert [t.rsplit(" ", 1)[1] for t in rebuild.ran("CODEGEN")] == ["(main_dispatch_6)"]
    assert f"{EXECUTABLES - 1} cached, 1 compiled, 0 left to the module's compile" in rebuild.output
    assert rebuild.ran("IREE") == ["build/vulkan/layers.vmfb"]
    assert cached_binaries(project, "vulkan") == plain_binaries(project, "vulkan")


def test_renumbered_executables_still_hit(layers_on_vulkan):
    project = layers_on_vulkan
    make(project, insert=4)
    rebuild = project.scons("EXECUTABLE_CACHE=vulkan")
    assert len(rebuild.ran("CODEGEN")) == 1
    assert f"{EXECUTABLES} cached, 1 compiled" in rebuild.output
    binaries = cached_binaries(project, "vulkan")
    assert f"main_dispatch_{EXECUTABLES + 1}" in binaries
    assert binaries == plain_binaries(project, "vulkan")


MLP_MANIFEST = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan"]
"""
SUBSTITUTIONS = """
[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/square.mlir"

[[substitutions]]
model = "mlp"
target = "vulkan"
executable = "main_dispatch_1"
file = "kernels/rowsum.glsl"
"""
MLP_INPUTS = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]


@needs_device("llvm-cpu")
def test_kernel_edits_never_rerun_the_front_end_and_substitutions_win(project):
    """The linked build (RELINK=no): kernel edits go through the cache and ASSEMBLE."""
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / "kernels/llvm-cpu/mlp_square_relu.mlir", "kernels/square.mlir")
    project.copy(REPO / "kernels/vulkan/mlp_bias_relu_rowsum.glsl", "kernels/rowsum.glsl")
    project.write("kernels/mlp.toml", MLP_MANIFEST)
    first = project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    assert len(first.ran("CODEGEN")) == 4          # both executables, both targets: cached now
    module = project.root / "build/llvm-cpu/mlp.vmfb"
    assert run_module(module, "local-sync", "main", MLP_INPUTS) == "4xf32=72 72 72 72"
    project.write("kernels/mlp.toml", MLP_MANIFEST + SUBSTITUTIONS)
    second = project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    assert second.ran("FRONTEND") == []               # the manifest changed, the model did not
    # The source kernel is an executable like any other, cached by content; the object is linked last.
    assert [t.rsplit(" ", 1)[1] for t in second.ran("CODEGEN")] == ["(main_dispatch_1)"]
    assert "1 cached, 1 compiled, 0 left to the module's compile" in second.output
    assert "1 cached, 0 compiled, 1 left to the module's compile" in second.output
    assert run_module(module, "local-sync", "main", MLP_INPUTS) == "4xf32=344 344 344 344"
    kernel = project.root / "kernels/square.mlir"        # the substituted source, edited:
    kernel.write_text(kernel.read_text().replace(          # twice the square
        "%sq = arith.mulf %9, %9 : f32",
        "%sq1 = arith.mulf %9, %9 : f32\n          %sq = arith.addf %sq1, %sq1 : f32"))
    third = project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    assert third.ran("FRONTEND") == []
    assert third.ran("ASSEMBLE") == ["build/llvm-cpu/mlp/module/mlp.mlir"]
    assert run_module(module, "local-sync", "main", MLP_INPUTS) == "4xf32=688 688 688 688"
    shader = project.root / "kernels/rowsum.glsl"          # the substituted object, edited:
    shader.write_text(shader.read_text().replace("row_sums[row] = sum;",   # twice the sum
                                                 "row_sums[row] = 2.0 * sum;"))
    assert project.read("build/vulkan/mlp/module/mlp.flags") == \
        "--compile-from=executable-sources\n"           # the object-substituted one is translated
    fourth = project.scons("EXECUTABLE_CACHE=1", "RELINK=no")
    assert fourth.ran("FRONTEND") == fourth.ran("ASSEMBLE") == []    # objects are linked last
    assert fourth.ran("IREE") == ["build/vulkan/mlp.vmfb"]
    if "vulkan" in runtime.available_drivers(RUN_MODULE):
        assert run_module(project.root / "build/vulkan/mlp.vmfb", "vulkan", "main",
                          MLP_INPUTS) == "4xf32=144 144 144 144"


def test_unknown_target_is_one_line(project):
    make(project)
    build = project.scons("EXECUTABLE_CACHE=metal", expect_ok=False)
    assert build.returncode == 2
    assert ("EXECUTABLE_CACHE: 'metal' has no codegen cache; it works for cuda, vulkan, "
            "llvm-cpu (or 1, 0)") in build.output
    assert "Traceback" not in build.output


def test_checkouts_building_at_once_share_one_cache(tmp_path):
    """Two scons runs fill one CODEGEN_CACHE_DIR at the same time; both modules come out whole."""
    shared = tmp_path / "shared-cache"
    checkouts = [make(Project(tmp_path / name)) for name in ("a", "b")]
    with concurrent.futures.ThreadPoolExecutor(len(checkouts)) as pool:
        runs = list(pool.map(lambda c: scons(c.root, "-j2", "EXECUTABLE_CACHE=vulkan",
                                             f"CODEGEN_CACHE_DIR={shared}"), checkouts))
    for run in runs:
        assert run.ok, run.failure()
    assert len(list((shared / "vulkan").glob("*.executable.mlir"))) == EXECUTABLES
    assert not list((shared / "vulkan").glob(".tmp-*"))
    a, b = (cached_binaries(c, "vulkan") for c in checkouts)
    assert a == b == plain_binaries(checkouts[0], "vulkan")


def test_a_shared_build_cache_holds_the_codegen_entries_too(tmp_path):
    """With CACHE_DIR set, entries go to its codegen/; CACHE_READONLY only reads them."""
    shared = tmp_path / "shared-cache"
    entries = shared / "codegen/vulkan"
    first = make(Project(tmp_path / "first")).scons("EXECUTABLE_CACHE=vulkan", f"CACHE_DIR={shared}")
    assert len(first.ran("CODEGEN")) == EXECUTABLES
    assert len(list(entries.glob("*.executable.mlir"))) == EXECUTABLES
    before = sorted(entries.iterdir())
    reader = make(Project(tmp_path / "reader"), change=3)
    read = reader.scons("EXECUTABLE_CACHE=vulkan", f"CACHE_DIR={shared}", "CACHE_READONLY=1")
    assert f"{EXECUTABLES - 1} cached, 1 compiled" in read.output
    assert sorted(entries.iterdir()) == before
    assert len(list((reader.root / "build/codegen-cache/vulkan").glob("*.spv"))) == 1
    writer = make(Project(tmp_path / "writer"), change=3)
    wrote = writer.scons("EXECUTABLE_CACHE=vulkan", f"CACHE_DIR={shared}")
    assert f"{EXECUTABLES - 1} cached, 1 compiled" in wrote.output
    assert len(list(entries.glob("*.executable.mlir"))) == EXECUTABLES + 1
    assert not (writer.root / "build/codegen-cache").exists()


@pytest.mark.parametrize("target", [pytest.param("llvm-cpu", marks=needs_device("llvm-cpu")),
                                    pytest.param("vulkan", marks=needs_device("vulkan"))])
def test_every_demo_model_computes_what_its_plain_compile_does(project, target, tmp_path,
                                                              tmp_path_factory):
    """The demo repo, its substitutions in, linked: every case of every model, bit for bit with
    the demo built without the cache."""
    for folder in ("kernels", "models"):
        shutil.copytree(REPO / folder, project.root / folder, dirs_exist_ok=True)
    # Built, not checked: each case below is compared bit for bit (scons check through the cache:
    # test_cached_module_computes_what_a_plain_compile_does).
    project.scons(f"IREE_TARGETS={target}", f"EXECUTABLE_CACHE={target}", "RELINK=no", "-j2")
    without_cache = linked_demo(tmp_path_factory, target)
    models = load_project(project.root, sorted((project.root / "kernels").glob("**/*.toml")))
    compared = []
    for model in models.models.values():
        if target not in model.targets or not model.expected:
            continue
        cases = expected_outputs.load_cases(str(project.root / model.expected), target)
        if not cases:
            continue
        cached, plain = (root / f"build/{target}/{model.name}.vmfb"
                         for root in (project.root, without_cache))
        assert (project.root / f"build/{target}/{model.name}/module/{model.name}.mlir"
                ).is_file(), f"{model.name} was not built through the cache"
        for case in cases:
            out = tmp_path / f"{model.name}.npy"
            for a, b in zip(case_outputs(RUN_MODULE, plain, case, DEVICES[target], out, project.root),
                            case_outputs(RUN_MODULE, cached, case, DEVICES[target], out, project.root)):
                assert a.dtype == b.dtype and np.array_equal(a, b), model.name
            compared.append(model.name)
    assert {"mlp", "elementwise", "saxpy", "layers"} <= set(compared)


def test_where_the_shared_cache_is_changes_nothing_built(project, tmp_path):
    """A copy of the shared cache at another path serves the same modules: no path is in them."""
    make(project)
    project.scons("EXECUTABLE_CACHE=vulkan", f"CACHE_DIR={tmp_path / 'here'}")
    shutil.copytree(tmp_path / "here", tmp_path / "there")
    project.scons("-c", "EXECUTABLE_CACHE=vulkan")
    again = project.scons("EXECUTABLE_CACHE=vulkan", f"CACHE_DIR={tmp_path / 'there'}")
    assert (again.ran("ASSEMBLE"), again.ran("IREE"), again.ran("CODEGEN")) == ([], [], [])
    assert "Retrieved `build/vulkan/layers.vmfb' from cache" in again.output


def test_a_damaged_entry_is_compiled_again_with_a_warning(layers_on_vulkan):
    project = layers_on_vulkan
    spirv_file = sorted((project.root / "build/codegen-cache/vulkan").glob("*.spv"))[0]
    spirv_file.write_bytes(spirv_file.read_bytes()[:-8])              # a truncated copy
    (project.root / "build/vulkan/layers/module/layers.mlir").unlink()
    again = project.scons("EXECUTABLE_CACHE=vulkan")
    digests = spirv_file.relative_to(project.root).with_suffix(".sha256")
    assert (f"scons: warning: codegen cache entry {digests} is not used: {spirv_file.name} "
            "does not have the SHA-256 recorded") in again.output
    assert f"{EXECUTABLES - 1} cached, 1 compiled" in again.output
    assert cached_binaries(project, "vulkan") == plain_binaries(project, "vulkan")
