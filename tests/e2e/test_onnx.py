"""End to end: ONNX model sources, imported by the build (tool onnx_import), then compiled like any model."""
from __future__ import annotations

import importlib.util
import json
import os

import numpy as np
import pytest

from conftest import REPO, Project, made_once, run_module

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402

MANIFEST = """
[models.net]
source = "models/net.onnx"
targets = ["llvm-cpu"]
"""
WEIGHTS = np.arange(12, dtype=np.float32).reshape(4, 3) - 4
X = np.array([[1, -1, 2, 0], [0.5, 1, -1, 1]], dtype=np.float32)
INPUT = "2x4xf32=" + " ".join(f"{v:g}" for v in X.flat)
MODULE = "build/llvm-cpu/net.vmfb"
IMPORTED = "build/models/net.mlir"


def net(weights=WEIGHTS, opset: int = 13) -> bytes:
    """A MatMul with constant weights, then a Relu: relu(x @ weights), x of 2x4."""
    w = helper.make_tensor("w", TensorProto.FLOAT, list(weights.shape), weights.flatten().tolist())
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"]), helper.make_node("Relu", ["y"], ["z"])],
        "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="test_onnx")
    onnx.checker.check_model(model)
    return model.SerializeToString()


def printed(values: np.ndarray) -> str:
    """A 2-D array as iree-run-module prints it."""
    rows = "".join("[" + " ".join(f"{v:g}" for v in row) + "]" for row in values)
    return f"{values.shape[0]}x{values.shape[1]}xf32={rows}"


def make(project, manifest=MANIFEST, weights=WEIGHTS):
    (project.root / "models").mkdir(parents=True, exist_ok=True)
    (project.root / "models/net.onnx").write_bytes(net(weights))
    project.write("kernels/demo.toml", manifest)


@pytest.fixture
def built(tmp_path_factory, tmp_path):
    """make()'s repo after its first build: built once per run, copied for each test."""
    def build(folder):
        project = Project(folder)
        make(project)
        project.scons()
    return Project.copy_of(made_once(tmp_path_factory, "onnx-net", build), tmp_path / "repo")


def test_onnx_model_is_imported_once_compiled_and_computes(project):
    make(project)
    expected = printed(np.maximum(X @ WEIGHTS, 0))
    assert "[0 " in expected                                   # the relu does something
    project.write("models/net.expected.toml",
                  f'[[case]]\nfunction = "net"\ninputs = ["{INPUT}"]\noutputs = ["{expected}"]\n')
    build = project.scons("check")
    assert build.ran("IMPORT") == [IMPORTED]
    assert build.ran("IREE") == [MODULE]
    assert "1 case(s) of models/net.expected.toml matched on local-sync" in build.output
    assert run_module(project.root / MODULE, "local-sync", "net", [INPUT]) == expected
    imported = (project.root / IMPORTED).read_bytes()
    assert b"torch.onnx_meta.opset_version = 17" in imported   # the default opset
    assert str(project.root).encode() not in imported and b"/tmp" not in imported
    (project.root / IMPORTED).unlink()
    again = project.scons()
    assert again.ran("IMPORT") == [IMPORTED] and again.ran("IREE") == []
    assert (project.root / IMPORTED).read_bytes() == imported  # reproducible
    assert project.scons("--question").returncode == 0


def test_what_reimports_and_what_does_not(built):
    project = built
    (project.root / "models/net.onnx").write_bytes(net(WEIGHTS * 2))
    changed = project.scons()
    assert changed.ran("IMPORT") == [IMPORTED] and changed.ran("IREE") == [MODULE]
    assert run_module(project.root / MODULE, "local-sync", "net", [INPUT]) == \
        printed(np.maximum(X @ (WEIGHTS * 2), 0))
    os.utime(project.root / "models/net.onnx", (1, 1))       # the same content: nothing to do
    assert project.scons().steps == []

    # A kernel for the imported model: its dumped executable, with relu(y) made min(y, 0).
    dumped = project.scons("dump", "IREE_TARGETS=llvm-cpu")
    assert dumped.ran("IMPORT") == []
    source = project.read("build/llvm-cpu/net/dump/sources/module_net$async_dispatch_0.mlir")
    assert "arith.cmpf ugt" in source
    project.write("kernels/net_min.mlir", source.replace("arith.cmpf ugt", "arith.cmpf ult"))
    project.write("kernels/demo.toml", MANIFEST + '\n[[substitutions]]\nmodel = "net"\n'
                  'target = "llvm-cpu"\nexecutable = "net$async_dispatch_0"\n'
                  'file = "kernels/net_min.mlir"\n')
    substituted = project.scons()
    assert substituted.ran("IMPORT") == [] and substituted.made_modules() == [MODULE]
    assert run_module(project.root / MODULE, "local-sync", "net", [INPUT]) == \
        printed(np.minimum(X @ (WEIGHTS * 2), 0))

    kernel = project.root / "kernels/net_min.mlir"
    kernel.write_text(kernel.read_text() + "// edited\n")
    edited = project.scons()
    # The kernel compiled alone again (RELINK), the model neither imported nor compiled.
    assert edited.ran("IMPORT") == edited.ran("FRONTEND") == edited.ran("IREE") == []
    assert len(edited.ran("BINARY")) == 1

    project.write("kernels/demo.toml", project.read("kernels/demo.toml").replace(
        'targets = ["llvm-cpu"]', 'targets = ["llvm-cpu"]\nopset = 18'))
    reimported = project.scons()
    assert reimported.ran("IMPORT") == [IMPORTED]
    assert b"opset_version = 18" in (project.root / IMPORTED).read_bytes()
    assert project.scons().steps == []


def test_corrupt_onnx_is_one_error_line_naming_the_model(built):
    project = built
    assert (project.root / IMPORTED).is_file()
    (project.root / "models/net.onnx").write_bytes(b"not a protobuf at all")
    build = project.scons(expect_ok=False)
    assert build.returncode != 0
    errors = [line for line in build.output.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, build.output
    assert errors[0].startswith(f"scons: *** [{IMPORTED}] kernels/demo.toml:2: models.net: cannot "
                                "import models/net.onnx: DecodeError: Error parsing message with "
                                "type 'onnx.ModelProto'"), build.output
    assert "Traceback" not in build.output
    assert not (project.root / IMPORTED).exists()
    assert not list((project.root / "build/models").iterdir())     # nothing half-written
    assert project.scons("--question", expect_ok=False).returncode != 0
    verbose = project.scons("VERBOSE=1", expect_ok=False)
    assert "Traceback" in verbose.output and "import_onnx" in verbose.output


def test_importer_is_a_variable_and_a_missing_one_is_one_line(project):
    make(project)
    project.write("SConstruct", project.read("SConstruct").replace(
        'Environment(tools=["iree_project"])',
        'Environment(tools=["iree_project"], IREE_IMPORT_ONNX="/nonexistent/iree-import-onnx")'))
    build = project.scons(expect_ok=False)
    assert build.returncode != 0
    errors = [line for line in build.output.splitlines() if line.startswith("scons: ***")]
    assert errors == [f"scons: *** [{IMPORTED}] kernels/demo.toml:2: models.net: cannot import "
                      "models/net.onnx: cannot run /nonexistent/iree-import-onnx: No such file "
                      "or directory"], build.output


def test_a_real_network_from_the_onnx_package(project):
    """squeezenet as models/fetch_onnx_models.py writes it, without its Softmax: the logits come out."""
    spec = importlib.util.spec_from_file_location("fetch", REPO / "models/fetch_onnx_models.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    fetch.fetch("squeezenet", project.root / "models", strip=True)
    project.write("kernels/demo.toml", '[models.squeezenet]\nsource = "models/squeezenet.onnx"\n'
                  'targets = ["llvm-cpu"]\n')
    build = project.scons()
    assert build.ran("IMPORT") == ["build/models/squeezenet.mlir"]
    printed = run_module(project.root / "build/llvm-cpu/squeezenet.vmfb", "local-sync", "squeezenet",
                         ["1x3x224x224xf32=1"])
    assert printed.startswith("1x1000x1x1xf32=")
    logits = {float(v) for v in printed.split("=", 1)[1].replace("[", " ").replace("]", " ").split()}
    # Splat weights: every logit is the same, and (no softmax) not 1/1000.
    assert len(logits) == 1 and logits.pop() > 1e6


def with_external_data(location: str) -> bytes:
    """net(), its weights' tensor naming the external data file ``location`` (beside the model)."""
    model = onnx.load_from_string(net())
    tensor = model.graph.initializer[0]
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    tensor.external_data.add(key="location", value=location)
    return model.SerializeToString()


def write_external(project, weights=WEIGHTS, location="w.bin") -> None:
    (project.root / "models").mkdir(parents=True, exist_ok=True)
    (project.root / "models/net.onnx").write_bytes(with_external_data(location))
    (project.root / "models" / location).write_bytes(weights.astype(np.float32).tobytes())


def test_editing_an_external_data_file_imports_the_model_again(project):
    write_external(project)
    project.write("kernels/demo.toml", MANIFEST)
    assert (project.root / "models/w.bin").stat().st_size == WEIGHTS.nbytes
    first = project.scons()
    assert first.ran("IMPORT") == [IMPORTED]
    assert run_module(project.root / MODULE, "local-sync", "net", [INPUT]) == \
        printed(np.maximum(X @ WEIGHTS, 0))
    assert project.scons("--question").returncode == 0
    (project.root / "models/w.bin").write_bytes((WEIGHTS * 2).astype(np.float32).tobytes())
    assert project.scons("--question", expect_ok=False).returncode != 0
    again = project.scons()
    assert again.ran("IMPORT") == [IMPORTED] and again.ran("IREE") == [MODULE]
    assert run_module(project.root / MODULE, "local-sync", "net", [INPUT]) == \
        printed(np.maximum(X @ (WEIGHTS * 2), 0))


@pytest.mark.parametrize("location, why", [
    ("../outside.bin", "outside the model's folder"),
    ("/etc/passwd", "outside the model's folder"),
    ("absent.bin", "which is not found")])
def test_external_data_outside_the_model_folder_is_refused(project, location, why):
    make(project)
    (project.root / "models/net.onnx").write_bytes(with_external_data(location))
    (project.root / "outside.bin").write_bytes(WEIGHTS.tobytes())
    build = project.scons(expect_ok=False)
    errors = [line for line in build.output.splitlines() if line.startswith("scons: ***")]
    assert errors == [f"scons: *** [{IMPORTED}] models/net.onnx: tensor 'w' stores its data in '{location}', "
                      f"{why}" + (": external data must lie in the model's folder or below it"
                                  if "outside" in why else "")], build.output
    assert build.returncode == 2 and "Traceback" not in build.output
    assert not (project.root / IMPORTED).exists()


def test_a_no_op_reads_no_onnx_model_and_a_lost_data_file_is_still_named(project, tmp_path):
    """The files a model's tensors name are kept while the model stays as it was: a no-op
    imports no onnx package (a spy stands in for it) and parses no model."""
    write_external(project)
    project.write("kernels/demo.toml", MANIFEST)
    project.scons()
    spy, imported = tmp_path / "spy", tmp_path / "onnx-imported"
    (spy / "onnx").mkdir(parents=True)
    (spy / "onnx/__init__.py").write_text(f"open({str(imported)!r}, 'w').close()\n"
                                          "raise ImportError('a spy')\n")
    assert project.scons(env={"PYTHONPATH": spy}).steps == []
    assert not imported.exists()
    (project.root / "models/w.bin").unlink()
    lost = project.scons(expect_ok=False)
    assert f"[{IMPORTED}] models/net.onnx: tensor 'w' stores its data in 'w.bin', which is not " \
           "found" in lost.output, lost.output


def test_a_memo_naming_files_outside_the_models_folder_is_not_taken(project):
    """The build folder's memo is the build's record, not an input: a value edited to name
    another file is computed again (the import's dependencies stay the model's own)."""
    write_external(project)
    project.write("kernels/demo.toml", MANIFEST)
    project.scons()
    memo = project.root / "build/.file-memo.json"
    kept = json.loads(memo.read_text())
    (entry,) = [v for k, v in kept["values"].items() if k.startswith("onnx-external-data ")]
    assert entry["value"] == [str(project.root / "models/w.bin")]
    entry["value"] = ["/etc/passwd"]
    memo.write_text(json.dumps(kept))
    assert project.scons().steps == []
    assert json.loads(memo.read_text()) != kept
