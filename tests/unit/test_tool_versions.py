"""Tools' versions kept between runs: asked again when the program or a library beside it changes."""
import json
import os
import shutil
import stat

import pytest

from iree_kernels.core import tool_versions, toolchains
from iree_kernels.core.tool_versions import VersionRecord


@pytest.fixture
def program(tmp_path):
    """A native program that answers --version (coreutils' true)."""
    native = tmp_path / "bin" / "tool"
    native.parent.mkdir()
    shutil.copy(shutil.which("true"), native)
    return native


@pytest.fixture(autouse=True)
def no_record_after():
    yield
    toolchains.keep_versions(None)


def test_a_native_programs_stamp_changes_with_it_and_with_a_library_beside_it(program):
    first = tool_versions.stamp(str(program))
    assert first and first[0][0] == str(program)
    assert tool_versions.stamp(str(program)) == first
    os.utime(program, ns=(1, 1))
    touched = tool_versions.stamp(str(program))
    assert touched != first
    (program.parent / "libtool.so.1").write_bytes(b"\x7fELF")
    assert tool_versions.stamp(str(program)) != touched


def test_a_script_or_a_missing_program_has_no_stamp(tmp_path):
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho 1.0\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    assert tool_versions.stamp(str(script)) is None
    assert tool_versions.stamp(str(tmp_path / "absent")) is None
    assert tool_versions.stamp("no-such-program-on-path") is None


def test_a_kept_version_answers_until_the_program_changes(tmp_path, program):
    kept = tmp_path / tool_versions.FILE
    toolchains.keep_versions(VersionRecord(kept, writable=True))
    asked = toolchains.version(str(program))
    assert "true" in asked
    data = json.loads(kept.read_text())
    data["versions"][f"{program} --version"]["version"] = "kept answer"
    kept.write_text(json.dumps(data))
    toolchains.keep_versions(VersionRecord(kept, writable=True))     # the next run
    assert toolchains.version(str(program)) == "kept answer"
    os.utime(program, ns=(1, 1))
    toolchains.keep_versions(VersionRecord(kept, writable=True))
    assert toolchains.version(str(program)) == asked


def test_a_dry_run_reads_the_record_and_writes_none(tmp_path, program):
    kept = tmp_path / tool_versions.FILE
    toolchains.keep_versions(VersionRecord(kept, writable=False))
    assert "true" in toolchains.version(str(program))
    assert not kept.exists()


@pytest.mark.parametrize("damaged", ["", "{", "[]", '{"format": 1, "versions": []}',
                                     '{"format": 99, "versions": {}}'])
def test_a_damaged_record_is_ignored_and_written_again(tmp_path, program, damaged):
    kept = tmp_path / tool_versions.FILE
    kept.write_text(damaged)
    toolchains.keep_versions(VersionRecord(kept, writable=True))
    assert "true" in toolchains.version(str(program))
    assert json.loads(kept.read_text())["format"] == tool_versions.FORMAT


@pytest.mark.parametrize("planted", ["fifo", "zero", "nested"])
def test_a_record_that_is_no_record_is_read_as_empty_at_once(tmp_path, planted):
    # A FIFO blocked every command, a link to /dev/zero was read whole, deep JSON recursed.
    path = tmp_path / tool_versions.FILE
    if planted == "fifo":
        os.mkfifo(path)
    elif planted == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text("[" * 200000)
    record = tool_versions.VersionRecord(path, writable=True)
    assert record.get("/bin/true", "--version", [1]) is None
