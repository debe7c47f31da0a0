"""Values computed from a file are kept while the file stays as it was (core.stat_memo)."""
from __future__ import annotations

import json
import os

from iree_kernels.core.stat_memo import StatMemo


def ANY(value) -> bool:
    return True


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, path) -> list[str]:
        self.calls += 1
        return [path.read_text()]


def test_a_value_is_computed_once_while_the_file_stays_as_it_was(tmp_path):
    model, record = tmp_path / "model.onnx", tmp_path / "memo.json"
    model.write_text("one")
    compute = Counting()
    assert StatMemo(record, True).value("names", model, compute, ANY) == ["one"]
    assert StatMemo(record, True).value("names", model, compute, ANY) == ["one"]   # another run
    assert compute.calls == 1


def test_a_file_written_again_or_another_value_of_it_is_computed_again(tmp_path):
    model, record = tmp_path / "model.onnx", tmp_path / "memo.json"
    model.write_text("one")
    compute = Counting()
    memo = StatMemo(record, True)
    memo.value("names", model, compute, ANY)
    model.write_text("two!")
    assert StatMemo(record, True).value("names", model, compute, ANY) == ["two!"]
    assert StatMemo(record, True).value("digest", model, compute, ANY) == ["two!"]
    assert compute.calls == 3


def test_a_look_computes_and_writes_nothing(tmp_path):
    model, record = tmp_path / "model.onnx", tmp_path / "memo.json"
    model.write_text("one")
    compute = Counting()
    StatMemo(record, writable=False).value("names", model, compute, ANY)
    StatMemo(record, writable=False).value("names", model, compute, ANY)
    assert compute.calls == 2 and not record.exists()


def test_a_record_the_build_did_not_write_is_written_anew(tmp_path):
    model, record = tmp_path / "model.onnx", tmp_path / "memo.json"
    model.write_text("one")
    record.write_text('{"format": 1, "values": [1, 2]}')
    assert StatMemo(record, True).value("names", model, Counting(), ANY) == ["one"]
    assert list(json.loads(record.read_text())["values"]) == [f"names {model}"]
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert StatMemo(fifo, False).value("names", model, Counting(), ANY) == ["one"]


def test_a_kept_value_that_is_not_valid_is_computed_again(tmp_path):
    model, record = tmp_path / "model.onnx", tmp_path / "memo.json"
    model.write_text("one")
    compute = Counting()
    StatMemo(record, True).value("names", model, compute, ANY)
    kept = json.loads(record.read_text())
    kept["values"][f"names {model}"]["value"] = 5          # edited by hand
    record.write_text(json.dumps(kept))
    is_list = lambda value: isinstance(value, list)         # noqa: E731
    assert StatMemo(record, True).value("names", model, compute, is_list) == ["one"]
    assert compute.calls == 2
