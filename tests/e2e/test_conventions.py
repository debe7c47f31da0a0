"""SCons conventions: scons -h writes booleans as the README does; CHECK_STRICT fails skipped checks."""
from __future__ import annotations

from conftest import REPO

MANIFEST = '[models.mlp]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'


def test_help_writes_booleans_yes_and_no(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MANIFEST)
    help_text = project.scons("-h", "VERBOSE=1").stdout
    assert "VERBOSE: print full command lines (yes|no)\n    default: no\n    actual: yes\n" \
        in help_text
    assert "CHECK_STRICT: " in help_text
    assert "False" not in help_text and "True" not in help_text


def test_a_skipped_check_fails_only_with_check_strict(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")          # no expected outputs
    project.write("kernels/demo.toml", MANIFEST)
    lenient = project.scons("check")
    assert "check: skipped build/llvm-cpu/mlp.vmfb: models/mlp.mlir has no expected outputs" \
        in lenient.stdout
    strict = project.scons("check", "CHECK_STRICT=yes", expect_ok=False)
    assert strict.returncode == 2
    assert ("models/mlp.mlir has no expected outputs (CHECK_STRICT=yes)") in strict.output
    assert project.scons("CHECK_STRICT=yes").returncode == 0          # builds without checks pass
