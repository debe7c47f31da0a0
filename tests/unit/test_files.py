"""iree_kernels.core.files: whole-file writes and copies, and what a path that is no file is called.

Links, FIFOs, size limits and permissions are tested in test_hardening.py and
test_integrity.py; here, what those leave out.
"""
from __future__ import annotations

import hashlib
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from iree_kernels.core import files


def test_a_write_makes_the_folder_replaces_the_file_and_leaves_no_temporary(tmp_path):
    path = tmp_path / "new/folder/out.txt"
    files.write_atomically(path, "é text")
    assert path.read_bytes() == "é text".encode("utf-8")
    files.write_atomically(path, b"\x00bytes")
    assert path.read_bytes() == b"\x00bytes"
    assert os.listdir(path.parent) == ["out.txt"]


def test_a_failed_write_leaves_the_old_file_whole(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(TypeError):
        files.write_atomically(path, 42)            # neither text nor bytes
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]


def test_a_copy_keeps_the_executable_bit_and_says_its_digest(tmp_path):
    source = tmp_path / "tool"
    source.write_bytes(b"#!/bin/sh\n")
    source.chmod(0o755)
    destination = tmp_path / "copy/tool"
    digest = files.copy_atomically(source, destination)
    assert digest == hashlib.sha256(b"#!/bin/sh\n").hexdigest()
    assert destination.read_bytes() == b"#!/bin/sh\n"
    assert destination.stat().st_mode & stat.S_IXUSR


def test_a_staged_copy_is_beside_its_place_until_put_there(tmp_path):
    source = tmp_path / "source"
    source.write_bytes(b"data")
    (tmp_path / "out").mkdir()
    temporary, digest = files.stage_copy(source, tmp_path / "out/copy")
    assert os.listdir(tmp_path / "out") == [os.path.basename(temporary)]
    assert digest == hashlib.sha256(b"data").hexdigest()
    files.put_in_place(temporary, tmp_path / "out/copy")
    assert os.listdir(tmp_path / "out") == ["copy"]
    assert (tmp_path / "out/copy").read_bytes() == b"data"


def test_what_a_path_is_named_when_it_is_no_file(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "file").write_text("x")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(tmp_path / "socket"))
        assert files.not_regular(tmp_path / "socket") == "a socket"
    assert files.not_regular(tmp_path / "file") is None
    assert files.not_regular(tmp_path / "none") == "not found"
    assert files.not_regular(tmp_path) == "a folder"
    assert files.not_regular(tmp_path / "fifo") == "a FIFO (named pipe)"
    assert files.not_regular("/dev/null") == "a character device"
    assert files.not_regular(tmp_path / "file/below") == "Not a directory"


def test_a_missing_file_is_file_not_found_and_a_folder_a_value_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="file not found"):
        files.read_text(tmp_path / "none")
    with pytest.raises(ValueError, match="^is a folder, not a regular file$"):
        files.read_text(tmp_path)
    (tmp_path / "latin1").write_bytes("é".encode("latin-1"))
    with pytest.raises(UnicodeDecodeError):
        files.read_text(tmp_path / "latin1")


def test_a_link_is_the_same_file_until_the_source_is_replaced(tmp_path):
    source, linked = tmp_path / "program.mlir", tmp_path / "module" / "program.mlir"
    linked.parent.mkdir()
    files.write_atomically(source, "old\n")
    files.write_atomically(linked, "stale\n")
    files.link_atomically(source, linked)
    assert linked.read_text() == "old\n" and os.path.samefile(source, linked)
    files.write_atomically(source, "new\n")               # replaced by a rename: the link keeps
    assert linked.read_text() == "old\n"
    assert sorted(p.name for p in linked.parent.iterdir()) == ["program.mlir"]


def test_a_link_across_file_systems_is_a_copy(tmp_path, monkeypatch):
    source, copied = tmp_path / "a", tmp_path / "b"
    source.write_text("x")
    monkeypatch.setattr(files.os, "link", lambda *a: (_ for _ in ()).throw(OSError(18, "EXDEV")))
    files.link_atomically(source, copied)
    assert copied.read_text() == "x" and not os.path.samefile(source, copied)


def test_what_a_dead_process_wrote_aside_is_removed_and_a_running_ones_kept(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale_folder = tmp_path / "cuda/m" / f".tmp-{dead.pid}-sources-x1"
    (stale_folder / "deep").mkdir(parents=True)
    (stale_folder / "deep/module_main_dispatch_0.mlir").write_text("dumped")
    stale_file = tmp_path / f".tmp-{dead.pid}-m.vmfb"
    stale_file.write_text("half")
    with files.scratch_folder(tmp_path / "cuda/m", "relink") as mine:
        (Path(mine) / "kept.mlir").write_text("in use")
        kept = {tmp_path / "cuda/m/.tmp-sources-not-a-pid", tmp_path / "m.vmfb"}
        for path in kept:
            path.write_text("not written aside")
        removed = files.remove_leftovers(tmp_path)
        assert sorted(removed) == sorted(map(str, (stale_folder, stale_file)))
        assert not stale_folder.exists() and not stale_file.exists()
        assert (Path(mine) / "kept.mlir").exists() and all(p.exists() for p in kept)
        assert Path(mine).name.startswith(f".tmp-{os.getpid()}-relink-")
    assert not Path(mine).exists()
