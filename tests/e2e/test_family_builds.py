"""End to end: one C family entry replaces every GEMM of the corpus transformer, each instance verified.

The transformer's six batch matmuls carry what IREE fuses into them (a scale,
a transposed store, a folded bias with a residual, a bias with GELU); the
kernel (kernels/families/gemm.c) is written once against iree_gemm.h.
"""
from __future__ import annotations

import importlib.util
import re

import pytest

from conftest import REPO
from test_corpus import _project, models  # noqa: F401  (models: the corpus fixture)

FAMILY = """
[[substitutions]]
model = "torch_transformer_mlir"
target = "llvm-cpu"
match = "*batch_matmul*"
file = "kernels/gemm.c"
workgroup_count = ["ceildiv(n, 64)", "ceildiv(m, 8)", "batch"]
"""


def test_one_c_family_replaces_every_gemm_of_the_transformer_each_verified(tmp_path, models):
    folder, entries = models
    project = _project(tmp_path, folder, entries["torch_transformer_mlir"], "llvm-cpu")
    project.copy(REPO / "kernels/families/gemm.c", "kernels/gemm.c")
    project.write("kernels/family.toml", FAMILY)

    built = project.scons("verify", "check")
    assert "took 6 of 6 executables it matched" in built.stdout
    assert len(built.ran("HEADER")) == 6
    assert len(re.findall(r"main\$async_dispatch_\d+ \(kernels/gemm.c, .*\) matched IREE's "
                          r"executable", built.stdout)) == 6
    assert re.search(r"check: build/llvm-cpu/torch_transformer_mlir.vmfb: 1 case\(s\) of .* "
                     r"matched", built.stdout)
    assert project.scons("--question", "verify", "check").stdout == ""

    kernel = project.read("kernels/gemm.c")
    project.write("kernels/gemm.c", kernel.replace("enum { TILE_M = 8", "enum { TILE_M = 4"))
    edited = project.scons()
    assert len(edited.ran("CC")) == 6 and edited.ran("RELINK")
    assert "FAMILIES" not in edited.stdout         # the executables were read once, kept
    assert not edited.ran("HEADER")

    assert "FAMILIES" not in project.scons("-c").stdout       # -c reads no executables
    assert not (project.root / "build/.families").exists()    # and removes what it kept


TRITON_FAMILY = """
[[substitutions]]
model = "torch_transformer_mlir"
target = "cuda"
match = "*batch_matmul*"
file = "kernels/gemm.py"
constexprs = { BLOCK_M = 64, BLOCK_N = 64, BLOCK_K = 32, GROUP_M = 8, PRECISION = 3 }
workgroup_count = ["ceildiv(m, 64) * ceildiv(n, 64)", "batch"]
"""


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no triton")
def test_a_triton_family_compiles_each_gemm_through_its_own_entry(tmp_path, models):
    folder, entries = models
    project = _project(tmp_path, folder, entries["torch_transformer_mlir"], "cuda")
    project.copy(REPO / "kernels/families/gemm.py", "kernels/gemm.py")
    project.write("kernels/family.toml", TRITON_FAMILY)

    built = project.scons()
    assert "took 4 of 6 executables it matched" in built.stdout
    assert built.stdout.count("which a Triton entry cannot hold") == 2      # folded biases
    assert len(built.ran("TRITON")) == 4 and len(built.ran("ABI")) == 4 and built.ran("RELINK")
    entry = project.read("build/cuda/torch_transformer_mlir/"
                         + built.ran("ENTRYPY")[0].split("torch_transformer_mlir/", 1)[1])
    assert "family_gemm(" in entry and "@triton.jit" in entry

    kernel = project.read("kernels/gemm.py")
    project.write("kernels/gemm.py", kernel.replace('"""One Triton GEMM', '"""A Triton GEMM'))
    edited = project.scons()
    assert len(edited.ran("TRITON")) == 4 and not edited.ran("ENTRYPY")


def test_a_family_on_a_pt2_model_reads_the_executables_of_its_import(tmp_path, models):
    folder, entries = models
    project = _project(tmp_path, folder, entries["torch_transformer"], "llvm-cpu")
    project.copy(REPO / "kernels/families/gemm.c", "kernels/gemm.c")
    project.write("kernels/family.toml", FAMILY.replace("torch_transformer_mlir",
                                                        "torch_transformer"))
    built = project.scons("check")
    assert "FAMILIES  importing models/torch_transformer.pt2" in built.stdout
    # The import step takes what was imported to read the executables: it imports no more.
    assert built.ran("IMPORT") == ["build/models/torch_transformer.mlir"]
    assert not list((project.root / "build/.families/imports").iterdir())
    assert "took 6 of 6 executables it matched" in built.stdout
    assert "check: build/llvm-cpu/torch_transformer.vmfb: 1 case(s)" in built.stdout
    assert project.scons("--question", "check").stdout == ""


TWO_GEMMS = """
func.func @main(%x: tensor<16x32xf32>, %w1: tensor<32x24xf32>, %b1: tensor<24xf32>,
                %w2: tensor<24xNxf32>) -> tensor<16xNxf32> {
  %zero = arith.constant 0.0 : f32
  %i1 = tensor.empty() : tensor<16x24xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%i1 : tensor<16x24xf32>) -> tensor<16x24xf32>
  %m1 = linalg.matmul ins(%x, %w1 : tensor<16x32xf32>, tensor<32x24xf32>)
                      outs(%f1 : tensor<16x24xf32>) -> tensor<16x24xf32>
  %relu = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                           affine_map<(i, j) -> (i, j)>],
                          iterator_types = ["parallel", "parallel"]}
      ins(%m1, %b1 : tensor<16x24xf32>, tensor<24xf32>) outs(%i1 : tensor<16x24xf32>) {
  ^bb0(%m: f32, %b: f32, %o: f32):
    %s = arith.addf %m, %b : f32
    %p = arith.cmpf ugt, %s, %zero : f32
    %r = arith.select %p, %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<16x24xf32>
  %i2 = tensor.empty() : tensor<16xNxf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<16xNxf32>) -> tensor<16xNxf32>
  %m2 = linalg.matmul ins(%relu, %w2 : tensor<16x24xf32>, tensor<24xNxf32>)
                      outs(%f2 : tensor<16xNxf32>) -> tensor<16xNxf32>
  return %m2 : tensor<16xNxf32>
}
"""
MODULE = "build/llvm-cpu/two_gemms.vmfb"
TWO_GEMMS_FAMILY = ('[models.two_gemms]\nsource = "models/two_gemms.mlir"\ntargets = ["llvm-cpu"]\n'
                    + FAMILY.replace("torch_transformer_mlir", "two_gemms")
                    .replace("*batch_matmul*", "*matmul*"))


def test_an_edit_of_one_instances_facts_rebuilds_that_instance_alone(project):
    project.copy(REPO / "kernels/families/gemm.c", "kernels/gemm.c")
    project.write("kernels/family.toml", TWO_GEMMS_FAMILY)
    project.write("models/two_gemms.mlir", TWO_GEMMS.replace("xN", "x8"))
    built = project.scons()
    assert "took 2 of 2 executables it matched" in built.stdout
    assert len(built.ran("HEADER")) == 2 and len(built.ran("CC")) == 2
    assert len(_matched(project.scons("verify"))) == 2

    project.write("models/two_gemms.mlir", TWO_GEMMS.replace("xN", "x12"))
    listed = project.scons("-n", MODULE, "verify")
    edited = project.scons(MODULE, "verify")
    assert "main_dispatch_1: " in edited.stdout and "16x12" in edited.stdout, edited.stdout
    assert edited.ran("HEADER") == ["build/llvm-cpu/two_gemms/main_dispatch_1/iree_gemm.h"]
    assert len(edited.ran("CC")) == 1 and edited.ran("RELINK")
    assert _matched(edited) == ["main_dispatch_1"]
    # A dry run cannot know that an unchanged instance's harness comes out the same: it
    # lists that instance's VERIFY too, and nothing else the build does not run.
    for step in ("HEADER", "CC", "RELINK"):
        assert listed.ran(step) == edited.ran(step)
    assert set(edited.steps) <= set(listed.steps)
    assert project.scons("--question", MODULE, "verify").stdout == ""


def _matched(run) -> list[str]:
    return re.findall(r"two_gemms/llvm-cpu (\S+) \(kernels/gemm.c, .*\) matched IREE's executable",
                      run.stdout)
