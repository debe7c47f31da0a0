"""models/fetch_onnx_models.py: the onnx package's light networks, with or without their final Softmax."""
from __future__ import annotations

import importlib.util

import pytest

from conftest import REPO

onnx = pytest.importorskip("onnx")


@pytest.fixture(scope="module")
def fetch():
    spec = importlib.util.spec_from_file_location("fetch_onnx_models", REPO / "models/fetch_onnx_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_strip_softmax_makes_the_logits_the_output(fetch, tmp_path, capsys):
    kept = onnx.load(fetch.fetch("squeezenet", tmp_path / "kept"))
    stripped = onnx.load(fetch.fetch("squeezenet", tmp_path, strip=True))
    assert "final Softmax removed" in capsys.readouterr().out
    assert kept.graph.node[-1].op_type == "Softmax"
    assert stripped.graph.name == "squeezenet"
    assert len(stripped.graph.node) == len(kept.graph.node) - 1
    assert [o.name for o in stripped.graph.output] == [kept.graph.node[-1].input[0]]
    assert stripped.graph.output[0].type == kept.graph.output[0].type
    onnx.checker.check_model(stripped)


def test_a_model_without_final_softmax_is_copied_as_it_is(fetch, tmp_path, capsys):
    model = onnx.load(fetch.fetch("densenet121", tmp_path, strip=True))
    assert "no final Softmax to remove" in capsys.readouterr().out
    assert model.graph.node[-1].op_type == "Conv"


def test_unknown_model_names_the_available_ones(fetch, tmp_path):
    with pytest.raises(SystemExit, match="no light_nope.onnx in the installed onnx package .*"
                                         "available: .*squeezenet"):
        fetch.fetch("nope", tmp_path)
