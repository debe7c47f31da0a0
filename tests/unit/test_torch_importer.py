"""The .pt2 importer: its script (data/import_torch.py) and the versions that key an import."""
from __future__ import annotations

import subprocess
import sys

import pytest

from iree_kernels.importers.onnx_importer import failure_reason
from iree_kernels.importers.torch_importer import SCRIPT, importer_versions


def _import(*args, python_flags=()):
    result = subprocess.run([sys.executable, *python_flags, "-P", str(SCRIPT), *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=300)               # as the build's spawn reads it
    return result.returncode, failure_reason(result.stdout)


def test_versions_name_turbine_torch_and_the_compiler():
    pytest.importorskip("torch")
    turbine, torch, compiler = importer_versions().split(", ")
    assert (turbine, compiler) == ("iree-turbine==3.9.0", "iree-base-compiler==3.13.0")
    assert torch.startswith("torch==2.13.0")          # the CPU wheel says 2.13.0+cpu


def test_a_file_that_is_no_pt2_says_so(tmp_path):
    pytest.importorskip("torch")
    (tmp_path / "net.pt2").write_text("not a zip")
    status, reason = _import(tmp_path / "net.pt2", "-o", tmp_path / "net.mlir")
    assert status == 1
    assert reason.startswith("not a .pt2 program that torch.export.save wrote (BadZipFile")
    assert not (tmp_path / "net.mlir").exists()


def test_without_torch_the_reason_says_what_to_install(tmp_path):
    (tmp_path / "net.pt2").write_bytes(b"")
    status, reason = _import(tmp_path / "net.pt2", "-o", tmp_path / "net.mlir",
                             python_flags=("-S",))         # no site-packages: no torch
    assert status == 1
    assert reason == ("No module named 'torch'; the .pt2 importer needs torch and iree-turbine "
                      "beside iree-base-compiler (pip install torch==2.13.0 iree-turbine==3.9.0, "
                      "or iree-kernels[torch]; ./setup.sh installs them)")


def test_a_pt2_imports_to_main_with_its_weights(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    torch.export.save(torch.export.export(model, (torch.zeros(2, 4),)), tmp_path / "net.pt2")
    assert _import(tmp_path / "net.pt2", "-o", tmp_path / "net.mlir") == (0, "")
    text = (tmp_path / "net.mlir").read_text()
    assert "func.func @main(%arg0: !torch.vtensor<[2,4],f32>)" in text
    assert "dense_resource<" in text and "{-#\n  dialect_resources: {" in text
    assert str(tmp_path) not in text
