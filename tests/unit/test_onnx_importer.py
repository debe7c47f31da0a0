"""What a failed ONNX import is reported as, and what the imports' signatures record."""
from __future__ import annotations

import pytest

from iree_kernels.importers.onnx_importer import failure_reason, importer_versions

TRACEBACK = """\
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/venv/lib/python3.11/site-packages/onnx/serialization.py", line 121, in deserialize_proto
    decoded = typing.cast("int | None", proto.ParseFromString(serialized))
                                        ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
google.protobuf.message.DecodeError: Error parsing message with type 'onnx.ModelProto'
"""


def test_a_traceback_becomes_its_exception_without_module_path():
    assert failure_reason(TRACEBACK) == "DecodeError: Error parsing message with type 'onnx.ModelProto'"


def test_an_exception_message_of_several_lines_is_joined():
    text = TRACEBACK.replace("'onnx.ModelProto'\n", "'onnx.ModelProto'\n  details here\n")
    assert failure_reason(text) == ("DecodeError: Error parsing message with type "
                                    "'onnx.ModelProto' details here")
    multi = 'Traceback (most recent call last):\n  File "x", line 1\nonnx.checker.ValidationError: ' \
            'Field "name" missing\n\n==> Context: Bad node\n'
    assert failure_reason(multi) == 'ValidationError: Field "name" missing ==> Context: Bad node'


def test_other_output_is_its_last_line_and_missing_onnx_says_how_to_install():
    assert failure_reason("warming up\nsegfault in importer\n") == "segfault in importer"
    assert failure_reason("") == ""
    missing = failure_reason("Traceback (most recent call last):\n  File \"x\"\n"
                             "ModuleNotFoundError: No module named 'onnx'\n")
    assert missing.startswith("ModuleNotFoundError: No module named 'onnx'; the importer needs "
                              "the onnx package")
    assert len(failure_reason("x" * 1000)) == 400


def test_importer_versions_name_both_packages():
    versions = importer_versions()
    assert versions.startswith("iree-base-compiler==3.13.0, onnx==")


def _model_naming(location: str) -> bytes:
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper
    w = helper.make_tensor("w", TensorProto.FLOAT, [1], [1.0])
    w.ClearField("float_data")
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value=location)
    graph = helper.make_graph([helper.make_node("Identity", ["w"], ["z"])], "g", [],
                              [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1])], [w])
    return helper.make_model(graph).SerializeToString()


def test_external_data_files_are_listed_and_those_leaving_the_folder_refused(tmp_path):
    from iree_kernels.core.errors import UserError
    from iree_kernels.importers.onnx_importer import external_data
    models = tmp_path / "models"
    (models / "data").mkdir(parents=True)
    (models / "data/w.bin").write_bytes(b"\0" * 4)
    (tmp_path / "secret").write_bytes(b"\0" * 4)
    (models / "link.bin").symlink_to(tmp_path / "secret")
    model = models / "m.onnx"
    model.write_bytes(_model_naming("data/w.bin"))
    assert external_data(model) == [str(models / "data/w.bin")]
    for location in ("../secret", "link.bin", str(tmp_path / "secret"), "data/../../secret"):
        model.write_bytes(_model_naming(location))
        with pytest.raises(UserError, match="outside the model's folder"):
            external_data(model, "models/m.onnx")
    model.write_bytes(b"not a protobuf")
    assert external_data(model) == []
