"""scons/lock: the build folder's lock, held by a build, shared by looks."""
from __future__ import annotations

import errno
import os

import pytest

from iree_kernels.scons import lock


def _read_only(*args, **kwargs):
    raise OSError(errno.EROFS, os.strerror(errno.EROFS))


def test_a_look_in_a_read_only_checkout_goes_on_without_the_lock(tmp_path, monkeypatch):
    monkeypatch.setattr(lock.os, "open", _read_only)
    lock.lock_build_folder(str(tmp_path), 0, shared=True)         # -n, --question: no refusal


def test_a_build_in_a_read_only_checkout_is_refused_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(lock.os, "open", _read_only)
    with pytest.raises(SystemExit) as stopped:
        lock.lock_build_folder(str(tmp_path), 0)
    assert stopped.value.code == 2
    assert capsys.readouterr().out == (f"scons: *** BUILD_DIR: cannot create {tmp_path}/"
                                       ".scons-lock: Read-only file system\n")
