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



def test_in_place_ops_and_batch_norm_import_decomposed(tmp_path):
    # aot.export decomposes an nn.Module, not a loaded program: relu_ reached iree-compile as is.
    torch = pytest.importorskip("torch")
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                                torch.nn.ReLU(inplace=True)).eval()
    torch.export.save(torch.export.export(model, (torch.zeros(1, 3, 8, 8),)), tmp_path / "cnn.pt2")
    assert _import(tmp_path / "cnn.pt2", "-o", tmp_path / "cnn.mlir") == (0, "")
    text = (tmp_path / "cnn.mlir").read_text()
    assert "torch.aten.relu " in text and "torch.aten.conv2d " in text
    assert "relu_" not in text and "batch_norm" not in text


def test_what_iree_turbine_cannot_import_is_one_line_naming_it(tmp_path):
    torch = pytest.importorskip("torch")

    class NoneOut(torch.nn.Module):
        def forward(self, x):
            return x + 1, None

    torch.export.save(torch.export.export(NoneOut(), (torch.zeros(2),)), tmp_path / "net.pt2")
    status, reason = _import(tmp_path / "net.pt2", "-o", tmp_path / "net.mlir")
    assert (status, reason) == (1, "iree-turbine 3.9.0 cannot import the program "
                                   "(NotImplementedError: Importing a program with an output "
                                   "of `None` is not yet implemented.)")
    assert not (tmp_path / "net.mlir").exists()

class _Payload:
    """A pickle that runs a command when loaded: what a hostile .pt2 carries."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        import os
        return os.system, (f"touch {self.marker}",)


def _hostile_pt2(tmp_path, replace):
    """A real .pt2 of a small network, with the members ``replace(names, marker)`` returns replaced."""
    import json
    import pickle
    import zipfile
    torch = pytest.importorskip("torch")
    model = torch.nn.Linear(4, 3)
    plain = tmp_path / "plain.pt2"
    torch.export.save(torch.export.export(model, (torch.zeros(2, 4),)), plain)
    marker = tmp_path / "code-ran"
    payload = pickle.dumps(_Payload(marker))
    hostile = tmp_path / "net.pt2"
    with zipfile.ZipFile(plain) as source, zipfile.ZipFile(hostile, "w") as out:
        members = {name: source.read(name) for name in source.namelist()}
        for name, data in replace(members, payload, json).items():
            out.writestr(name, data)
    return hostile, marker


def _pickled_weight(members, payload, json):
    config_name = next(n for n in members if n.endswith("model_weights_config.json"))
    config = json.loads(members[config_name])
    entry = next(iter(config["config"].values()))
    entry["use_pickle"] = True
    weight = config_name.rsplit("/", 1)[0] + "/" + entry["path_name"]
    return {**members, config_name: json.dumps(config).encode(), weight: payload}


def _pickled_sample_inputs(members, payload, json):
    name = next(n for n in members if "/sample_inputs/" in n)
    return {**members, name: payload}


def _opaque_constant(members, payload, json):
    from torch.export.pt2_archive.constants import OPAQUE_OBJ_FILENAME_PREFIX
    config_name = next(n for n in members if n.endswith("model_constants_config.json"))
    path_name = f"{OPAQUE_OBJ_FILENAME_PREFIX}0"
    config = {"config": {"hostile": {"path_name": path_name, "is_param": False,
                                     "use_pickle": True, "tensor_meta": None}}}
    folder = config_name.rsplit("/", 1)[0]
    return {**members, config_name: json.dumps(config).encode(), f"{folder}/{path_name}": payload}


@pytest.mark.parametrize("replace, why", [
    (_pickled_weight, "Unsupported operand 149"),          # torch's restricted unpickler's words
    (_pickled_sample_inputs, "Unsupported operand 149"),
    (_opaque_constant, "an object that is not a tensor"),
], ids=["a weight", "the sample inputs", "an opaque constant"])
def test_a_pt2_whose_pickle_runs_code_is_refused_and_nothing_runs(tmp_path, replace, why):
    hostile, marker = _hostile_pt2(tmp_path, replace)
    status, reason = _import(hostile, "-o", tmp_path / "net.mlir")
    assert not marker.exists()
    assert status == 1
    assert reason == ("refused: the .pt2 holds a pickle that is not plain tensor data "
                      f"(a pickle can run code): {why}")
    assert not (tmp_path / "net.mlir").exists()
