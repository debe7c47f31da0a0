"""Facts kept in BUILD_DIR/.families are found again only by the reader that wrote them."""
from __future__ import annotations

from iree_kernels.core.stat_memo import computed_each_time
from iree_kernels.scons import discovery


def test_facts_kept_by_another_version_of_the_reader_are_read_again(tmp_path, monkeypatch):
    model = tmp_path / "m.mlir"
    model.write_text("module {}\n")
    kept = discovery._digest(tmp_path, model, ["--iree-hal-target-device=local"], "3.13.0", computed_each_time())
    assert discovery._digest(tmp_path, model, ["--iree-hal-target-device=local"], "3.13.0",
                             computed_each_time()) == kept
    monkeypatch.setattr(discovery, "_reader", lambda: "another reader")
    assert discovery._digest(tmp_path, model, ["--iree-hal-target-device=local"], "3.13.0",
                             computed_each_time()) != kept
