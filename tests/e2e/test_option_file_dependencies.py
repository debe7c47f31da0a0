"""Files named by iree-compile flags in a model's options are dependencies of the steps reading them."""
from __future__ import annotations

import pytest

from conftest import REPO, Project, made_once

TUNING_SPEC = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__kernel_config(%op: !transform.any_op {transform.consumed}) -> !transform.any_op
      attributes {iree_codegen.tuning_spec_entrypoint} {
    transform.yield %op : !transform.any_op
  }
}
"""
PREPROCESSING_SPEC = """module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%module: !transform.any_op {transform.readonly}) {
    transform.yield
  }
}
"""
MANIFEST = """
[models.tuned]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]
options = { llvm-cpu = ["--iree-codegen-tuning-spec-path=specs/tuning.mlir"] }

[models.preprocessed]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]
options = { llvm-cpu = ["--iree-preprocessing-transform-spec-filename=specs/pre.mlir"] }

[models.plain]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]
"""


@pytest.fixture
def specs(project):
    return specs_repo(project)


@pytest.fixture
def specs_built(tmp_path_factory, tmp_path):
    """specs_repo() after its first build: built once per run, copied for each test."""
    def build(folder):
        specs_repo(Project(folder)).scons()
    return Project.copy_of(made_once(tmp_path_factory, "specs", build), tmp_path / "repo")


def specs_repo(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("specs/tuning.mlir", TUNING_SPEC)
    project.write("specs/pre.mlir", PREPROCESSING_SPEC)
    project.write("kernels/demo.toml", MANIFEST)
    return project


def test_a_tuning_spec_edit_recompiles_only_its_module(specs):
    specs.scons()
    assert specs.scons().steps == []
    specs.write("specs/tuning.mlir", TUNING_SPEC + "// edited\n")
    rebuild = specs.scons()
    assert rebuild.ran("IREE") == ["build/llvm-cpu/tuned.vmfb"]
    assert rebuild.ran("FRONTEND") == []          # codegen reads it, the front end does not


def test_a_preprocessing_spec_edit_rebuilds_only_its_model(specs_built):
    specs = specs_built
    specs.write("specs/pre.mlir", PREPROCESSING_SPEC + "// edited\n")
    rebuild = specs.scons()
    # A model without kernels is one plain compile: the edit compiles it, and nothing else.
    assert rebuild.ran("IREE") == ["build/llvm-cpu/preprocessed.vmfb"]
    assert rebuild.ran("FRONTEND") == []
    assert specs.scons("--question").returncode == 0


def test_a_tuning_spec_edit_misses_the_codegen_cache(specs):
    specs.scons("EXECUTABLE_CACHE=llvm-cpu")
    specs.write("specs/tuning.mlir", TUNING_SPEC + "// edited\n")
    rebuild = specs.scons("EXECUTABLE_CACHE=llvm-cpu")
    assert rebuild.ran("IREE") == ["build/llvm-cpu/tuned.vmfb"]
    assert rebuild.ran("CODEGEN")                  # a new key: compiled, not taken from the cache
    assert "build/llvm-cpu/plain/module/plain.mlir" not in rebuild.ran("ASSEMBLE")


def test_a_missing_file_is_named_with_its_manifest_line(specs):
    (specs.root / "specs/tuning.mlir").unlink()
    build = specs.scons(expect_ok=False)
    assert build.returncode == 2
    assert ("kernels/demo.toml:5: models.tuned: field 'options': options.llvm-cpu: "
            "specs/tuning.mlir (relative to the repository root) does not exist") in build.output
