"""bench/corpus.py: the same seed writes the same bytes; the ONNX models' weights are dense."""
from __future__ import annotations

import numpy as np
import pytest

from bench import corpus


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_torch_models_are_deterministic_and_seeded(tmp_path):
    pytest.importorskip("iree.turbine")
    for out, seed in (("a", 0), ("b", 0), ("c", 1)):
        corpus.write(tmp_path / out, ["torch_dynamic"], seed=seed, root=tmp_path / out)
    a, b, c = (_files(tmp_path / out) for out in "abc")
    assert sorted(a) == ["torch_dynamic.expected.toml", "torch_dynamic.pt2",
                         "torch_dynamic/input0.npy", "torch_dynamic/input1.npy",
                         "torch_dynamic/output0.npy", "torch_dynamic/output1.npy"]
    assert a == b
    assert a["torch_dynamic.pt2"] != c["torch_dynamic.pt2"]
    assert '"@./torch_dynamic/input1.npy"' in a["torch_dynamic.expected.toml"].decode()


def test_onnx_light_model_gets_dense_weights(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import numpy_helper
    (entry,) = corpus.write(tmp_path, ["onnx_squeezenet"], seed=3)
    model = onnx.load(tmp_path / entry.source)
    assert not [n for n in model.graph.node if n.op_type in ("ConstantOfShape", "Softmax")]
    weights = [w for w in map(numpy_helper.to_array, model.graph.initializer)
               if w.dtype == np.float32]            # not the graph's own shapes (int64)
    assert 4_900_000 < entry.weights_bytes <= sum(w.nbytes for w in weights)
    assert all(len(np.unique(w)) > w.size // 2 for w in weights if w.size > 1)
    assert {v.name for v in model.graph.input} >= {t.name for t in model.graph.initializer}
    again = tmp_path / "again"
    corpus.write(again, ["onnx_squeezenet"], seed=3)
    assert (again / entry.source).read_bytes() == (tmp_path / entry.source).read_bytes()


def test_unknown_models_are_refused(tmp_path):
    with pytest.raises(SystemExit, match="no model resnet; models: onnx_squeezenet, torch_cnn"):
        corpus.write(tmp_path, ["resnet"])


def test_tokens_set_the_transformers_sequence_length_and_scale_its_width():
    pytest.importorskip("torch")
    modules = corpus._torch_modules(8, tokens=2048)
    block, shapes = modules["torch_transformer"]
    assert shapes == [(1, 2048, 512)] and block.q.in_features == 512
    assert corpus._torch_modules(1)["torch_transformer"][1] == [(1, 16, 64)]   # the default


def test_a_huggingface_model_without_transformers_names_the_requirements_file(tmp_path,
                                                                              monkeypatch):
    pytest.importorskip("torch")
    monkeypatch.setitem(__import__("sys").modules, "transformers", None)   # import fails
    with pytest.raises(SystemExit, match="hf_gpt2 needs transformers: .* -r "
                                         "bench/requirements-hf.txt"):
        corpus.write(tmp_path, ["hf_gpt2"])
    assert not list(tmp_path.iterdir())


def test_the_layers_generator_writes_the_checked_in_model_and_any_count_of_distinct_layers():
    from harness import REPO
    from models import generate_layers
    assert generate_layers.model_mlir(generate_layers.layers()) == \
        (REPO / "models/layers.mlir").read_text()
    stack = generate_layers.layers(change=7, count=260)      # bench/real_models.py's layers260
    assert len({(layer.width_in, layer.width_out) for layer in stack}) == 260
    assert [layer.activation for layer in stack].count("leaky_relu") == 1
    assert stack[7].activation == "leaky_relu"
