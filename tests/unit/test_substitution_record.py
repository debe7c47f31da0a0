"""substitutions.json: written by substitution.record, read back by read_record."""
from __future__ import annotations

import pytest

from iree_kernels.module import substitution
from iree_kernels.module.substitution import read_record


class _Planned:
    def __init__(self, **fields):
        self.fields = fields

    def as_record(self) -> dict:
        return self.fields


def _applied(executable: str, **extra) -> _Planned:
    return _Planned(model="mlp", target="cuda", executable=executable, export=f"{executable}_x",
                    file=f"kernels/{executable}.cu", mode="object",
                    flag=f"--iree-hal-substitute-executable-object={executable}=k.ptx", **extra)


def test_a_record_reads_back_what_was_written():
    text = substitution.record("mlp", "cuda", "models/mlp.mlir",
                               [_applied("d0", selector="export"), _applied("d1")])
    record = read_record(text)
    assert (record.model, record.target, record.source) == ("mlp", "cuda", "models/mlp.mlir")
    assert [a.executable for a in record.substitutions] == ["d0", "d1"]
    first = record.applied("d0")
    assert (first.export, first.file) == ("d0_x", "kernels/d0.cu")
    assert first.flag == "--iree-hal-substitute-executable-object=d0=k.ptx"
    assert first.fields["selector"] == "export"


def test_an_executable_that_was_not_substituted_is_not_found():
    record = read_record(substitution.record("mlp", "cuda", "m.mlir", [_applied("d0")]))
    with pytest.raises(KeyError):
        record.applied("d9")
