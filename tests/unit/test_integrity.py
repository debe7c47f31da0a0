"""Cache trust: digest records and their signatures, files that must be files, the umask's permissions."""
from __future__ import annotations

import os
import stat

import pytest

from conftest import umask
from iree_kernels.module import codegen_cache
from iree_kernels.core import files
from iree_kernels.cache import integrity
from iree_kernels.core.errors import UserError
from iree_kernels.cache.integrity import Trust, Untrusted
from iree_kernels.cache.store import Store

KEY = b"ci-signing-key-0123456789abcdef"
OTHER_KEY = b"someone-elses-key-0123456789"
DIGEST = "ab" * 32
NAME = "0123456789abcdef0123456789abcdef"


def test_an_unsigned_record_is_taken_without_a_key_and_refused_with_one():
    record = Trust().record({NAME: DIGEST})
    assert record == f"# iree-kernels cache record 1\n{DIGEST}  {NAME}\n".encode()
    assert Trust().check(record, [NAME]) == {NAME: DIGEST}
    with pytest.raises(Untrusted, match="is not signed"):
        Trust(KEY).check(record, [NAME])


def test_a_record_signed_with_the_key_is_taken_by_readers_with_or_without_it():
    record = Trust(KEY).record({NAME: DIGEST})
    assert record.splitlines()[-1].startswith(f"# hmac-sha256 {Trust(KEY).key_id} ".encode())
    assert Trust(KEY).check(record, [NAME]) == {NAME: DIGEST}
    assert Trust().check(record, [NAME]) == {NAME: DIGEST}


def test_a_changed_digest_under_a_kept_signature_is_refused():
    record = Trust(KEY).record({NAME: DIGEST})
    forged = record.replace(DIGEST.encode(), b"cd" * 32)
    with pytest.raises(Untrusted, match="signature does not match"):
        Trust(KEY).check(forged, [NAME])


def test_a_record_signed_with_another_key_is_refused():
    record = Trust(OTHER_KEY).record({NAME: DIGEST})
    with pytest.raises(Untrusted, match=f"signed with another key \\({Trust(OTHER_KEY).key_id}"):
        Trust(KEY).check(record, [NAME])


def test_a_signed_record_moved_to_another_entry_names_the_wrong_file():
    record = Trust(KEY).record({NAME: DIGEST})
    with pytest.raises(Untrusted, match="does not name ffff"):
        Trust(KEY).check(record, ["ffff"])


@pytest.mark.parametrize("record", [
    b"", DIGEST.encode() + b"\n",                               # empty; the old SCons-cache format
    f"{DIGEST}  {NAME}\n".encode(),                             # the old codegen-cache format
    f"# iree-kernels cache record 1\n{DIGEST} {NAME}\n".encode(),
    f"# iree-kernels cache record 1\n{DIGEST}  {NAME}".encode(),
    f"# iree-kernels cache record 1\n{DIGEST}  {NAME}\n# hmac-sha256 xyz\n".encode(),
    b"\xff\xfe"])
def test_a_malformed_record_is_refused(record):
    with pytest.raises(Untrusted):
        Trust().check(record, [NAME])


def test_the_key_is_in_no_record_repr_or_message():
    trust = Trust(KEY)
    entry = codegen_cache.Entry(".", "k", ".ptx", Store(trust=trust))
    shown = [repr(trust), str(trust), repr(entry),
             trust.record({NAME: DIGEST}).decode()]
    for record in (Trust().record({NAME: DIGEST}), Trust(OTHER_KEY).record({NAME: DIGEST})):
        with pytest.raises(Untrusted) as e:
            trust.check(record, [NAME])
        shown.append(str(e.value))
    for text in shown:
        assert KEY.decode() not in text and KEY.hex() not in text
    assert trust.key_id in shown[0]


def test_the_key_comes_from_the_environment_or_a_file(tmp_path):
    assert integrity.from_environment({}) == Trust()
    assert integrity.from_environment({"IREE_KERNELS_CACHE_KEY": KEY.decode()}) == Trust(KEY)
    key_file = tmp_path / "key"
    key_file.write_bytes(KEY + b"\n")
    assert integrity.from_environment({"IREE_KERNELS_CACHE_KEY_FILE": str(key_file)}) == Trust(KEY)


@pytest.mark.parametrize("environ, require, message", [
    ({}, True, "CACHE_REQUIRE_SIGNED needs the cache signing key"),
    ({"IREE_KERNELS_CACHE_KEY": "short"}, False, "too short"),
    ({"IREE_KERNELS_CACHE_KEY": KEY.decode(), "IREE_KERNELS_CACHE_KEY_FILE": "k"}, False,
     "not both"),
    ({"IREE_KERNELS_CACHE_KEY_FILE": "/nonexistent/key"}, False,
     "cannot read /nonexistent/key: No such file"),
])
def test_a_bad_key_setting_is_one_line_without_the_key(environ, require, message):
    with pytest.raises(UserError) as e:
        integrity.from_environment(environ, require_signed=require)
    assert message in str(e.value) and "\n" not in str(e.value)
    assert KEY.decode() not in str(e.value) and "short" not in str(e.value).replace("too short", "")


def test_a_link_is_never_read_as_a_file(tmp_path):
    outside = tmp_path / "outside"
    outside.write_bytes(b"secret")
    link = tmp_path / "link"
    link.symlink_to(outside)
    assert not files.is_regular(link) and files.is_regular(outside)
    with pytest.raises(files.NotRegularFile, match="is a symbolic link"):
        files.read_regular(link)
    with pytest.raises(files.NotRegularFile, match="is a folder"):
        files.read_regular(tmp_path)
    with pytest.raises(files.NotRegularFile):
        files.copy_atomically(link, tmp_path / "copy")
    assert not (tmp_path / "copy").exists()


@pytest.mark.parametrize("mask", [0o022, 0o027, 0o002])
def test_written_files_get_the_umasks_permissions(tmp_path, mask):
    with umask(mask):
        files.write_atomically(tmp_path / "written", "text")
        source = tmp_path / "tool"
        source.write_bytes(b"#!/bin/sh\n")
        source.chmod(0o755)
        files.copy_atomically(source, tmp_path / "copied-tool")
        files.copy_atomically(tmp_path / "written", tmp_path / "copied")
    mode = lambda name: stat.S_IMODE((tmp_path / name).stat().st_mode)  # noqa: E731
    assert mode("written") == mode("copied") == 0o666 & ~mask
    assert mode("copied-tool") == 0o777 & ~mask


def signed_entry(folder, trust: Trust) -> codegen_cache.Entry:
    entry = codegen_cache.Entry(folder, "ef" * 32, ".ptx", Store(trust=trust))
    folder.mkdir(exist_ok=True)
    entry.translated.write_text("hal.executable public @x {\n}\n")
    entry.binary.write_text(".visible .entry x(\n")
    entry.record_digests()
    return entry


def found(folder, trust: Trust, shared=None) -> tuple[codegen_cache.Entry, list[str]]:
    damaged = []
    integrity.configure(trust)
    try:
        return codegen_cache._found("ef" * 32, ".ptx", folder, shared, damaged), damaged
    finally:
        integrity.configure(Trust())


def test_a_codegen_entry_signed_with_the_key_is_taken(tmp_path):
    entry = signed_entry(tmp_path / "cache", Trust(KEY))
    taken, damaged = found(entry.folder, Trust(KEY))
    assert damaged == [] and taken.exists() and taken.damage() is None
    assert KEY not in entry.digests.read_bytes()


def test_a_swapped_codegen_entry_with_a_recomputed_record_is_refused_with_a_key(tmp_path):
    entry = signed_entry(tmp_path / "cache", Trust(KEY))
    entry.binary.write_text(".visible .entry injected(\n")
    codegen_cache.Entry(entry.folder, entry.key, ".ptx", Store(trust=Trust())).record_digests()
    taken, damaged = found(entry.folder, Trust(KEY))
    assert len(damaged) == 1 and "is not used: it is not signed" in damaged[0]
    assert not taken.exists() and not entry.binary.exists()          # removed: compiled again


def test_a_codegen_entry_signed_with_another_key_is_refused(tmp_path):
    entry = signed_entry(tmp_path / "cache", Trust(OTHER_KEY))
    _, damaged = found(entry.folder, Trust(KEY))
    assert len(damaged) == 1 and "signed with another key" in damaged[0]


@pytest.mark.parametrize("linked", ["binary", "translated", "digests"])
def test_a_linked_codegen_file_is_not_followed_and_is_removed(tmp_path, linked):
    entry = signed_entry(tmp_path / "cache", Trust())
    path = getattr(entry, linked)
    outside = tmp_path / "outside"
    outside.write_bytes(path.read_bytes())          # the very content the record names
    path.unlink()
    path.symlink_to(outside)
    taken, damaged = found(entry.folder, Trust())
    subject = "its digest record" if linked == "digests" else path.name
    assert damaged == [f"{entry.digests} is not used: {subject} is a symbolic link; "
                       "entry removed, compiling it again"]
    assert not os.path.lexists(path) and outside.exists()


def test_a_linked_file_in_a_read_only_codegen_cache_is_kept_and_not_taken(tmp_path):
    entry = signed_entry(tmp_path / "shared", Trust())
    outside = tmp_path / "outside"
    outside.write_bytes(entry.binary.read_bytes())
    entry.binary.unlink()
    entry.binary.symlink_to(outside)
    taken, damaged = found(tmp_path / "own", Trust(), shared=entry.folder)
    assert taken.folder == tmp_path / "own" and len(damaged) == 1
    assert "is a symbolic link; entry kept (read-only cache)" in damaged[0]
    assert entry.binary.is_symlink()


def test_a_key_file_that_is_a_fifo_a_device_or_huge_is_refused_unread(tmp_path):
    import os
    fifo = tmp_path / "key-fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge-key"
    huge.write_bytes(b"k" * (integrity.MAX_KEY_FILE_BYTES + 1))
    for path, message in ((fifo, "is a FIFO (named pipe), not a regular file"),
                          ("/dev/zero", "is a character device, not a regular file"),
                          (huge, "is larger than 64 KiB, which no key is")):
        with pytest.raises(UserError) as error:
            integrity.from_environment({"IREE_KERNELS_CACHE_KEY_FILE": str(path)})
        assert message in str(error.value) and "kkkk" not in str(error.value)
