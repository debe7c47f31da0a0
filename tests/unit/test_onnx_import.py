"""What a failed ONNX import is reported as, and what the imports' signatures record."""
from __future__ import annotations

from iree_kernels.onnx_import import failure_reason, importer_versions

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
