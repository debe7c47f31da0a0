"""The first workflow without copying by hand: a folder of kernels (``from``), kernels derived by
iree-opt pipelines (``passes``), objects linked from beside a kernel; on llvm-cpu, one small
project for the module."""
from __future__ import annotations

import pytest

from conftest import REPO, Project, made_once, run_module
from iree_kernels.core import toolchains

MODEL = """\
func.func @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = arith.addf %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @mul(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = arith.mulf %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @sub(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = arith.subf %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
MODELS = """\
[models.three]
source = "models/three.mlir"
targets = ["llvm-cpu"]

[models.other]
source = "models/other.mlir"
targets = ["llvm-cpu"]
"""
FOLDER = """
[[substitutions]]
model = "three"
target = "llvm-cpu"
from = "kernels/llvm-cpu/tuned/"
verify = false
"""
INPUTS = ["8xf32=3", "8xf32=2"]


def call(project: Project, function: str) -> str:
    return run_module(project.root / "build/llvm-cpu/three.vmfb", "local-sync", function, INPUTS)


@pytest.fixture
def three(tmp_path_factory, tmp_path) -> Project:
    """The two models, dumped (scons dump): made once per run, copied for each test."""
    def dump(folder):
        project = Project(folder)
        project.write("models/three.mlir", MODEL)
        project.write("models/other.mlir", MODEL.replace("8xf32", "4xf32"))
        project.write("kernels/models.toml", MODELS)
        project.scons("dump")
    return Project.copy_of(made_once(tmp_path_factory, "kernel-folders", dump), tmp_path / "repo")


def dumped(project: Project, executable: str) -> str:
    return project.read(f"build/llvm-cpu/three/dump/sources/module_{executable}.mlir")


def test_a_folder_substitutes_each_file_and_a_new_file_rebuilds_only_its_module(three):
    folder = "kernels/llvm-cpu/tuned"
    # Two edited executables, named as the dump names them and without its prefix.
    three.write(f"{folder}/module_add_dispatch_0.mlir",
                dumped(three, "add_dispatch_0").replace("arith.addf", "arith.mulf"))
    three.write(f"{folder}/mul_dispatch_0.mlir",
                dumped(three, "mul_dispatch_0").replace("arith.mulf", "arith.addf"))
    three.write("kernels/models.toml", MODELS + FOLDER)
    three.scons()
    assert (call(three, "add"), call(three, "mul"), call(three, "sub")) == \
        ("8xf32=6 6 6 6 6 6 6 6", "8xf32=5 5 5 5 5 5 5 5", "8xf32=1 1 1 1 1 1 1 1")
    assert three.scons("--question").ok
    three.write(f"{folder}/sub_dispatch_0.mlir",
                dumped(three, "sub_dispatch_0").replace("arith.subf", "arith.addf"))
    build = three.scons()
    assert build.made_modules() == ["build/llvm-cpu/three.vmfb"]
    assert build.ran("FRONTEND") == [] and build.ran("IREE") == []      # relinked
    assert build.ran("BINARY")[-1] == "build/llvm-cpu/three/relink/sub_dispatch_0.bin"
    assert all(path.startswith("build/llvm-cpu/three") for _, path in build.steps)
    assert call(three, "sub") == "8xf32=5 5 5 5 5 5 5 5"
    assert three.scons("--question").ok
    # A file naming no executable: one line, naming the entry and the executables there are.
    three.write(f"{folder}/div_dispatch_0.mlir", dumped(three, "sub_dispatch_0"))
    build = three.scons(expect_ok=False)
    assert not build.ok
    (line,) = [l for l in build.stderr.splitlines() if l.startswith("scons: ***")]
    assert "kernels/models.toml:12: [[substitutions]] #1 (kernels/llvm-cpu/tuned/" \
        "div_dispatch_0.mlir)" in line
    assert "no executable 'div_dispatch_0'" in line and \
        "its executables: add_dispatch_0, mul_dispatch_0, sub_dispatch_0" in line
    (three.root / folder / "div_dispatch_0.mlir").unlink()


CSE = "builtin.module(hal.executable(hal.executable.variant(builtin.module(func.func({})))))"
DERIVED = """
[[substitutions]]
model = "three"
target = "llvm-cpu"
export = "mul_dispatch_0_*"
passes = "kernels/llvm-cpu/mul.passes"
"""


def test_a_pipeline_derives_a_kernel_that_verifies_and_follows_the_model(three):
    three.write("kernels/llvm-cpu/mul.passes", f"# tidy\n{CSE.format('canonicalize')}\n"
                f"{CSE.format('cse')}\n")
    three.write("kernels/models.toml", MODELS + DERIVED)
    build = three.scons("modules", "verify")
    assert "OPT      build/llvm-cpu/three/export_mul_dispatch_0_" in build.stdout
    (derived,) = (three.root / "build/llvm-cpu/three").glob("*.derived.mlir")
    assert f"=mul_dispatch_0={derived.relative_to(three.root)}" in \
        three.read("build/llvm-cpu/three/substitutions.flags")
    assert "verify: three/llvm-cpu mul_dispatch_0 (build/llvm-cpu/three/export_mul_dispatch_0_" \
        in build.stdout and "matched IREE's executable" in build.stdout
    assert call(three, "mul") == "8xf32=6 6 6 6 6 6 6 6"
    assert three.scons("--question").ok
    # Derived public, as IREE dumps it: alone, iree-compile crashed on a private executable.
    assert "not relinked" not in build.output and build.ran("RELINK") == ["build/llvm-cpu/three.vmfb"]
    listing = three.scons("dump").stdout
    assert f"  mul_dispatch_0  derived/{derived.name.replace('.derived', '')}  " \
        "kernels/models.toml:9: " in listing
    # The model changes: the executable is derived again from the new front end's output.
    model = three.read("models/three.mlir")
    three.write("models/three.mlir", model.replace("arith.mulf %a, %b", "arith.mulf %a, %a"))
    build = three.scons()
    assert [p for s, p in build.steps if s == "OPT"] == [str(derived.relative_to(three.root))]
    assert call(three, "mul") == "8xf32=9 9 9 9 9 9 9 9"
    assert three.scons("--question").ok
    three.write("models/three.mlir", model)
    # A pipeline that fails: one line naming the entry and iree-opt's first error.
    three.write("kernels/llvm-cpu/mul.passes", CSE.format("no-such-pass") + "\n")
    build = three.scons(expect_ok=False)
    (line,) = [l for l in build.stderr.splitlines() if l.startswith("scons: ***")]
    assert "kernels/models.toml:13: [[substitutions]] #1 (export 'mul_dispatch_0_*' of " \
        "three/llvm-cpu): field 'passes': iree-opt pipeline " in line
    assert line.endswith("'no-such-pass' does not refer to a registered pass or pass pipeline")


SAXPY = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "{}"
"""


@pytest.mark.skipif(toolchains.on_path("clang") is None, reason="no clang")
def test_an_mlir_kernel_links_objects_beside_it_through_its_folders_search_path(three):
    three.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    three.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.c")
    wrapped = SAXPY.format("kernels/saxpy.c") + 'workgroup_count = ["ceildiv(w0, 1024)"]\n'
    three.write("kernels/models.toml", MODELS + wrapped)
    three.scons("build/llvm-cpu/saxpy.vmfb")
    # The wrapper the build made, moved into a folder of its own with the object it links.
    wrapper = three.read("build/llvm-cpu/saxpy/main_dispatch_0.wrapper.mlir")
    assert 'path = "build/kernels/saxpy.o"' in wrapper
    three.write("kernels/native/main_dispatch_0.mlir",
                wrapper.replace('path = "build/kernels/saxpy.o"', 'path = "saxpy.o"'))
    three.copy(three.root / "build/kernels/saxpy.o", "kernels/native/saxpy.o")
    three.write("kernels/models.toml",
                MODELS + SAXPY.format("kernels/native/main_dispatch_0.mlir"))
    three.scons("build/llvm-cpu/saxpy.vmfb")
    assert three.read("build/llvm-cpu/saxpy/substitutions.flags").splitlines()[0] == \
        "--iree-hal-executable-object-search-path=kernels/native"
    module = three.root / "build/llvm-cpu/saxpy.vmfb"
    assert run_module(module, "local-sync", "main", ["4xf32=3", "4xf32=1"]) == "4xf32=7 7 7 7"
    assert three.scons("--question", "build/llvm-cpu/saxpy.vmfb").ok
    # The object is a dependency: a new one compiles the module again.
    with open(three.root / "kernels/native/saxpy.o", "ab") as o:
        o.write(b"\0")
    assert [s for s, _ in three.scons("build/llvm-cpu/saxpy.vmfb").steps] == ["IREE"]


ASYNC = """\
func.func @"main$async"(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %0 = arith.addf %a, %b : tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""


def test_a_folder_of_irees_own_dump_substitutes_as_it_was_written(project):
    # torch and ONNX executables are main$async_dispatch_N; IREE dumps module_<name>.mlir.
    project.write("models/t.mlir", ASYNC)
    project.write("kernels/models.toml", '[models.t]\nsource = "models/t.mlir"\n'
                                         'targets = ["llvm-cpu"]\n')
    project.scons("dump")
    name = "module_main$async_dispatch_0.mlir"
    dumped = project.read(f"build/llvm-cpu/t/dump/sources/{name}")
    project.write(f"kernels/dumped/{name}", dumped.replace("arith.addf", "arith.subf"))
    project.write("kernels/dumped.toml", '[[substitutions]]\nmodel = "t"\ntarget = "llvm-cpu"\n'
                                         'from = "kernels/dumped"\nverify = false\n')
    project.scons()
    module = project.root / "build/llvm-cpu/t.vmfb"
    assert "8xf32=1 1 1 1 1 1 1 1" in run_module(module, "local-sync", "main$async", INPUTS)
    assert project.read("build/llvm-cpu/t/substitutions.flags").strip() == \
        f"--iree-hal-substitute-executable-source=main$async_dispatch_0=kernels/dumped/{name}"
    assert project.scons("--question").returncode == 0
