"""End to end: scons on a small repo, asserting what each build ran and what the modules compute."""
from __future__ import annotations

import pytest

from conftest import REPO, Project, made_once, run_module

MLP = REPO / "models/mlp.mlir"
SQUARE = REPO / "kernels/llvm-cpu/mlp_square_relu.mlir"
MANIFEST = """
[models.a]
source = "models/a.mlir"
targets = ["llvm-cpu"]

[models.b]
source = "models/b.mlir"
targets = ["llvm-cpu"]

[models.plain]
source = "models/a.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "a"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/a_square.mlir"
verify = false                  # the squared relu computes something else on purpose

[[substitutions]]
model = "b"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/b_square.mlir"
verify = false
"""
INPUTS = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]


def make(project):
    project.copy(MLP, "models/a.mlir")
    project.copy(MLP, "models/b.mlir")
    project.copy(SQUARE, "kernels/a_square.mlir")
    project.copy(SQUARE, "kernels/b_square.mlir")
    project.write("kernels/demo.toml", MANIFEST)


@pytest.fixture
def built(tmp_path_factory, tmp_path) -> Project:
    """make()'s repo after its first build: built once per run, copied for each test."""
    def build(folder):
        first = Project(folder)
        make(first)
        first.scons()
    return Project.copy_of(made_once(tmp_path_factory, "incremental", build), tmp_path / "repo")


def test_second_build_runs_nothing_and_question_agrees(project):
    make(project)
    first = project.scons()
    assert first.made_modules() == ["build/llvm-cpu/a.vmfb", "build/llvm-cpu/b.vmfb",
                                    "build/llvm-cpu/plain.vmfb"]
    second = project.scons()
    assert second.steps == []
    assert project.scons("--question").returncode == 0


def test_editing_one_kernel_recompiles_only_its_module(built):
    project = built
    before = (project.root / "build/llvm-cpu/b.vmfb").read_bytes()
    kernel = project.root / "kernels/a_square.mlir"
    kernel.write_text(kernel.read_text().replace("%sq = arith.mulf %9, %9 : f32",
                                                 "%sq = arith.addf %9, %9 : f32"))
    rebuild = project.scons()
    # Relinked: a's kernel compiled alone, its binary put in a's unlinked module.
    assert rebuild.ran("BINARY") == ["build/llvm-cpu/a/relink/main_dispatch_1.bin"]
    assert rebuild.made_modules() == ["build/llvm-cpu/a.vmfb"] and rebuild.ran("IREE") == []
    assert (project.root / "build/llvm-cpu/b.vmfb").read_bytes() == before
    # A comment changes no binary: the module is not made again.
    kernel.write_text(kernel.read_text() + "// touched\n")
    touched = project.scons()
    assert touched.ran("BINARY") == ["build/llvm-cpu/a/relink/main_dispatch_1.bin"]
    assert touched.made_modules() == []


def test_changing_one_models_options_rebuilds_only_that_model(built):
    project = built
    project.write("kernels/demo.toml", MANIFEST.replace(
        '[models.b]\nsource = "models/b.mlir"\ntargets = ["llvm-cpu"]\n',
        '[models.b]\nsource = "models/b.mlir"\ntargets = ["llvm-cpu"]\n'
        'options = { llvm-cpu = ["--iree-opt-level=O1"] }\n'))
    rebuild = project.scons()
    assert rebuild.made_modules() == ["build/llvm-cpu/b.vmfb"]
    assert "--iree-opt-level=O1" in project.read("build/llvm-cpu/b/options.flags")


def test_substituted_module_computes_what_the_edit_says(built):
    project = built
    plain = run_module(project.root / "build/llvm-cpu/plain.vmfb", "local-sync", "main", INPUTS)
    squared = run_module(project.root / "build/llvm-cpu/a.vmfb", "local-sync", "main", INPUTS)
    # relu(8 * 0.5 + b) summed over 16 columns: b cycles -1 0 1 2, so relu values 3 4 5 6.
    assert plain == "4xf32=72 72 72 72"
    assert squared == "4xf32=344 344 344 344"        # 4 * (9 + 16 + 25 + 36)


def test_unknown_executable_is_an_error_listing_the_real_ones(project):
    make(project)
    project.write("kernels/demo.toml", MANIFEST.replace(
        'executable = "main_dispatch_1"\nfile = "kernels/b_square.mlir"',
        'executable = "main_dispatch_7"\nfile = "kernels/b_square.mlir"'))
    build = project.scons(expect_ok=False)
    assert build.returncode != 0
    assert ("kernels/demo.toml:24: [[substitutions]] #2 (executable 'main_dispatch_7' of "
            "b/llvm-cpu): field 'executable': model 'b' has no executable 'main_dispatch_7' for "
            "target 'llvm-cpu' (did you mean 'main_dispatch_1'?); its executables: "
            "main_dispatch_0, main_dispatch_1") in build.output
    assert "Traceback" not in build.output
    assert not (project.root / "build/llvm-cpu/b.vmfb").exists()
    assert not (project.root / "build/llvm-cpu/b/substitutions.flags").exists()


def test_manifest_error_stops_before_building(project):
    make(project)
    project.write("kernels/demo.toml", MANIFEST.replace('file = "kernels/a_square.mlir"',
                                                        'file = "kernels/missing.mlir"'))
    build = project.scons(expect_ok=False)
    assert build.returncode == 2
    assert ("kernels/demo.toml:18: [[substitutions]] #1 (executable 'main_dispatch_1' of "
            "a/llvm-cpu): field 'file': file not found: kernels/missing.mlir") in build.output
    assert not (project.root / "build").exists()


def test_check_compares_outputs_and_fails_loudly(project):
    make(project)
    expected = """
[[case]]
function = "main"
inputs = {inputs}
outputs = ["{output}"]
"""
    project.write("models/a.expected.toml",
                  expected.format(inputs=INPUTS, output="4xf32=344 344 344 344").replace("'", '"'))
    project.write("models/b.expected.toml",
                  expected.format(inputs=INPUTS, output="4xf32=72 72 72 72").replace("'", '"'))
    build = project.scons("check", "build/llvm-cpu/a.check", expect_ok=False)
    assert "1 case(s) of models/a.expected.toml matched on local-sync" in build.output
    build = project.scons("check", expect_ok=False)
    assert build.returncode != 0
    assert "models/b.expected.toml: [[case]] #1: build/llvm-cpu/b.vmfb on device 'local-sync' " \
           "does not produce the expected outputs of @main" in build.output
    assert "result 0: element [0] is 344.0, expected 72.0" in build.output
    assert not (project.root / "build/llvm-cpu/b.check").exists()
