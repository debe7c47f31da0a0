"""The store behind both caches: publish, verify on read, read-only, permissions, the remote cache."""
from __future__ import annotations

import hashlib
import os
import stat

import pytest

from conftest import umask
from iree_kernels.cache import remote_protocol
from iree_kernels.cache.integrity import Trust
from iree_kernels.cache.store import Entry, Refused, Store

KEY = b"ci-signing-key-0123456789abcdef"
NAME = "0123456789abcdef"


def entry(folder, *files: str) -> Entry:
    return Entry(folder, NAME, files or (NAME,))


def published(folder, files: dict[str, bytes] | None = None, trust: Trust = Trust()) -> Entry:
    files = files or {NAME: b"module"}
    written = Entry(folder, NAME, tuple(files))
    assert Store(trust=trust).publish(written, files)
    return written


def test_a_published_entry_is_read_back_as_written(tmp_path):
    written = published(tmp_path / "cache", {"code.mlir": b"hal.executable", "code.ptx": b".entry"})
    assert Store().read(written) == {"code.mlir": b"hal.executable", "code.ptx": b".entry"}
    record = (tmp_path / "cache" / f"{NAME}.sha256").read_text()
    assert record.startswith("# iree-kernels cache record 1\n")
    assert f"{hashlib.sha256(b'.entry').hexdigest()}  code.ptx\n" in record
    assert sorted(p.name for p in written.folder.iterdir()) == \
        [f"{NAME}.sha256", "code.mlir", "code.ptx"]                  # nothing staged is left


def test_a_swapped_entry_is_refused_naming_the_file(tmp_path):
    written = published(tmp_path, {"code.mlir": b"hal.executable", "code.ptx": b".entry"})
    (tmp_path / "code.ptx").write_bytes(b".entry injected")
    with pytest.raises(Refused, match=r"^code.ptx does not have the SHA-256 recorded \("):
        Store().read(written)


def test_a_swapped_entry_with_a_recomputed_record_is_refused_by_a_reader_with_the_key(tmp_path):
    written = published(tmp_path, trust=Trust(KEY))
    assert Store(trust=Trust(KEY)).read(written) == {NAME: b"module"}
    published(tmp_path, {NAME: b"injected"})                         # no key: unsigned
    assert Store().read(written) == {NAME: b"injected"}               # trusted without a key
    with pytest.raises(Refused, match="^it is not signed"):
        Store(trust=Trust(KEY)).read(written)


@pytest.mark.parametrize("what", ["file", "record"])
def test_a_linked_file_or_record_is_never_followed(tmp_path, what):
    written = published(tmp_path / "cache")
    path = written.paths[0] if what == "file" else written.record
    outside = tmp_path / "outside"
    outside.write_bytes(path.read_bytes())                           # the content recorded
    path.unlink()
    path.symlink_to(outside)
    reason = "it is a symbolic link" if what == "file" else "its digest record is a symbolic link"
    with pytest.raises(Refused, match=f"^{reason}$"):
        Store().read(written)
    with pytest.raises(Refused, match=f"^{reason}$"):
        Store().copy(written, NAME, tmp_path / "taken")
    assert not (tmp_path / "taken").exists()
    assert written.present() and not written.whole()


def test_an_entry_without_a_record_is_refused(tmp_path):
    (tmp_path / NAME).write_bytes(b"module")
    with pytest.raises(Refused, match="no SHA-256 is recorded beside it"):
        Store().read(entry(tmp_path))


def test_a_copy_whose_content_differs_from_the_record_is_not_put_in_place(tmp_path):
    written = published(tmp_path / "cache")
    Store().copy(written, NAME, tmp_path / "taken")
    assert (tmp_path / "taken").read_bytes() == b"module"
    written.paths[0].write_bytes(b"modulE")
    with pytest.raises(Refused, match="^it does not have the SHA-256 recorded"):
        Store().copy(written, NAME, tmp_path / "again")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "taken"]


def test_a_read_only_store_never_writes_removes_or_touches(tmp_path):
    written = published(tmp_path / "cache")
    os.utime(written.paths[0], (1_000_000, 1_000_000))
    before = {p.name: (p.read_bytes(), p.stat().st_mtime) for p in written.folder.iterdir()}
    reader = Store(read_only=True)
    assert reader.read(written) == {NAME: b"module"}
    assert reader.publish(written, {NAME: b"other"}) is False
    assert reader.discard(written) == "kept (read-only cache)"
    reader.write_note(tmp_path / "cache" / "note", b"note")
    reader.create(tmp_path / "new")
    assert reader.fetch(written, "x") is False
    assert {p.name: (p.read_bytes(), p.stat().st_mtime) for p in written.folder.iterdir()} == before
    assert not (tmp_path / "new").exists()


def test_taking_an_entry_touches_it_and_a_refused_one_is_removed(tmp_path):
    written = published(tmp_path)
    os.utime(written.paths[0], (1_000_000, 1_000_000))
    Store().read(written)
    assert written.paths[0].stat().st_mtime > 1_000_000
    assert Store().discard(written) == "removed" and list(tmp_path.iterdir()) == []


def test_a_source_that_is_a_link_publishes_nothing(tmp_path):
    (tmp_path / "built").write_bytes(b"module")
    (tmp_path / "link").symlink_to(tmp_path / "built")
    with pytest.raises(OSError, match="is a symbolic link"):
        Store().publish(entry(tmp_path / "cache"), {NAME: tmp_path / "link"})
    assert not (tmp_path / "cache").exists()


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_what_is_published_gets_the_umasks_permissions(tmp_path, mask):
    tool = tmp_path / "tool"
    tool.write_bytes(b"#!/bin/sh\n")
    tool.chmod(0o700)
    with umask(mask):
        Store().publish(Entry(tmp_path / "cache" / "ab", NAME, ("tool", "data")),
                        {"tool": tool, "data": b"data"})
        Store().create(tmp_path / "created")
    mode = lambda path: stat.S_IMODE((tmp_path / path).stat().st_mode)  # noqa: E731
    assert mode("cache/ab/data") == mode(f"cache/ab/{NAME}.sha256") == 0o666 & ~mask
    assert mode("cache/ab/tool") == 0o777 & ~mask
    assert mode("cache") == mode("cache/ab") == mode("created") == 0o777 & ~mask


class FakeRemote:
    """A remote cache in memory, with RemoteCache's fetch and store."""

    def __init__(self):
        self.results: dict[str, dict[str, bytes]] = {}
        self.warnings: list[str] = []
        self.warn = self.warnings.append

    def fetch(self, key, names, what):
        found = self.results.get(key)
        return None if found is None or any(n not in found for n in names) else dict(found)

    def store(self, key, files):
        self.results[key] = dict(files)


def test_a_published_entry_is_uploaded_and_fetched_elsewhere_then_checked(tmp_path):
    remote = FakeRemote()
    writer = Store(trust=Trust(KEY), remote=remote, namespace="codegen cuda")
    written = entry(tmp_path / "ci", "code.mlir")
    writer.publish(written, {"code.mlir": b"hal.executable"})
    key = remote_protocol.action_key("codegen cuda", NAME)
    assert sorted(remote.results[key]) == [f"{NAME}.sha256", "code.mlir"]
    reader = Store(trust=Trust(KEY), remote=remote, namespace="codegen cuda")
    fetched = entry(tmp_path / "dev", "code.mlir")
    assert reader.fetch(fetched, "code")
    assert reader.read(fetched) == {"code.mlir": b"hal.executable"}
    assert not Store(remote=remote, namespace="scons").fetch(entry(tmp_path / "x", "code.mlir"), "")
    remote.results[key]["code.mlir"] = b"hal.executable injected"    # the server's content swapped
    swapped = entry(tmp_path / "other", "code.mlir")
    assert reader.fetch(swapped, "code")
    with pytest.raises(Refused, match="does not have the SHA-256 recorded"):
        reader.read(swapped)


def test_a_read_only_build_fetches_into_its_own_mirror_only_and_never_uploads(tmp_path):
    remote = FakeRemote()
    Store(remote=remote, namespace="scons").publish(entry(tmp_path / "ci"), {NAME: b"module"})
    uploads = []
    remote.store = lambda key, files: uploads.append(key)
    shared = Store(read_only=True, remote=remote, namespace="scons")
    assert not shared.fetch(entry(tmp_path / "shared"), "m")
    assert not (tmp_path / "shared").exists()
    mirror = Store(read_only=True, remote=remote, namespace="scons", mirror=True)
    fetched = entry(tmp_path / "mirror")
    assert mirror.fetch(fetched, "m") and mirror.read(fetched) == {NAME: b"module"}
    mirror.upload(fetched)
    assert not mirror.publish(entry(tmp_path / "mirror2"), {NAME: b"other"})
    assert uploads == [] and not (tmp_path / "mirror2").exists()
