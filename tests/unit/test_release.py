"""Release archives and lock records: determinism, the timestamp, and comparing a checkout with a release."""
from __future__ import annotations

import os

import gzip
import hashlib
import io
import json
import subprocess
import tarfile

import pytest

from iree_kernels.release import provenance
from iree_kernels.release.archive import Release, archive_bytes, read_release
from iree_kernels.release.compare import compare, report
from iree_kernels.release.lock import LOCK_MEMBER, ModuleBuild, lock_record, lock_text, module_lock
from iree_kernels.release.provenance import (NOT_A_REPOSITORY, checkout_state, dirty_refusal,
                                             git_commit_time, source_date_epoch)
from iree_kernels.core.errors import UserError
from iree_kernels.ir.object_references import object_paths

EPOCH = 1_700_000_000


def test_archive_depends_only_on_members_and_time():
    members = {"build/b.vmfb": b"b" * 100, "lock.json": b"{}\n", "build/a.vmfb": b"a"}
    first = archive_bytes(members, EPOCH)
    again = archive_bytes(dict(reversed(list(members.items()))), EPOCH)
    assert first == again
    assert archive_bytes(members, EPOCH + 1) != first


def test_archive_headers_carry_no_time_owner_or_name_of_this_machine():
    data = archive_bytes({"z.vmfb": b"z", "a.vmfb": b"a"}, EPOCH)
    flags, mtime = data[3], int.from_bytes(data[4:8], "little")
    assert flags & 0x08 == 0                        # no file name in the gzip header
    assert mtime == EPOCH
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(data))) as tar:
        infos = tar.getmembers()
    assert [i.name for i in infos] == ["a.vmfb", "z.vmfb"]
    for info in infos:
        assert (info.mtime, info.mode, info.uid, info.gid, info.uname, info.gname) == \
               (EPOCH, 0o644, 0, 0, "", "")


def test_source_date_epoch_prefers_the_environment_then_git_then_zero(tmp_path):
    assert source_date_epoch(tmp_path, {"SOURCE_DATE_EPOCH": "42"},
                             commit_time=lambda root: 7) == 42
    assert source_date_epoch(tmp_path, {}, commit_time=lambda root: 7) == 7
    assert source_date_epoch(tmp_path, {}, commit_time=lambda root: None) == 0


def test_a_folder_outside_any_git_repository_has_no_commit_time(tmp_path):
    assert git_commit_time(tmp_path) is None


@pytest.mark.parametrize("text", ["yesterday", "-5", "1.5"])
def test_malformed_source_date_epoch_is_a_user_error(text):
    with pytest.raises(UserError, match="SOURCE_DATE_EPOCH must be a whole number"):
        source_date_epoch(".", {"SOURCE_DATE_EPOCH": text})


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _write(root, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def _built_module(root, glsl="void main() {}\n", spv="SPIRV", vmfb="MODULE") -> ModuleBuild:
    record = {"model": "mlp", "target": "vulkan", "source": "models/mlp.mlir",
              "substitutions": [{"model": "mlp", "target": "vulkan",
                                 "executable": "main_dispatch_1", "export": "main_dispatch_1_x",
                                 "mode": "object", "file": "kernels/k.glsl",
                                 "path": "build/vulkan/mlp/k.spv", "flag": "--iree-hal-"
                                 "substitute-executable-object=main_dispatch_1=k.spv"}]}
    _write(root, {"models/mlp.mlir": "module {}\n", "kernels/k.glsl": glsl,
                  "build/vulkan/mlp/k.spv": spv, "build/vulkan/mlp.vmfb": vmfb,
                  "build/vulkan/mlp/substitutions.json": json.dumps(record),
                  "build/vulkan/mlp/options.flags": "--iree-hal-target-device=vulkan\n",
                  "build/vulkan/mlp/substitutions.flags":
                      "--iree-hal-substitute-executable-object=main_dispatch_1="
                      "build/vulkan/mlp/k.spv\n"})
    return ModuleBuild("mlp", "vulkan", "build/vulkan/mlp.vmfb",
                       "build/vulkan/mlp/substitutions.json",
                       "build/vulkan/mlp/options.flags",
                       "build/vulkan/mlp/substitutions.flags",
                       {"iree-compile": "IREE 3.13.0", "glslangValidator": "11:12.0.0"})


def test_lock_entry_hashes_model_kernel_compiled_kernel_and_module(tmp_path):
    entry = module_lock(tmp_path, _built_module(tmp_path))
    assert entry["source"] == {"path": "models/mlp.mlir", "sha256": _sha("module {}\n")}
    sub, = entry["substitutions"]
    assert sub["kernel"] == {"path": "kernels/k.glsl", "sha256": _sha("void main() {}\n")}
    assert sub["compiled"] == {"path": "build/vulkan/mlp/k.spv", "sha256": _sha("SPIRV")}
    assert "wrapper" not in sub
    assert entry["flag_files"]["options"]["text"] == "--iree-hal-target-device=vulkan\n"
    assert entry["tools"] == {"glslangValidator": "11:12.0.0", "iree-compile": "IREE 3.13.0"}
    assert entry["module"] == {"path": "build/vulkan/mlp.vmfb", "sha256": _sha("MODULE")}


def _release_of(root, build) -> Release:
    lock = lock_record([module_lock(root, build)], EPOCH)
    archive = root / "release.tar.gz"
    archive.write_bytes(archive_bytes(
        {LOCK_MEMBER: lock_text(lock).encode(),
         build.module: (root / build.module).read_bytes()}, EPOCH))
    return read_release(archive)


def test_an_unchanged_checkout_matches_its_release(tmp_path):
    build = _built_module(tmp_path)
    findings = compare(_release_of(tmp_path, build),
                       {build.key: module_lock(tmp_path, build)})
    assert all(f.matches for f in findings)
    assert {f.subject for f in findings} >= {"models/mlp.mlir", "kernels/k.glsl",
                                             "build/vulkan/mlp/k.spv", "tool iree-compile",
                                             "build/vulkan/mlp.vmfb"}


def test_a_changed_kernel_is_named_as_the_reason_the_module_differs(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    _built_module(tmp_path, glsl="void main() { x(); }\n", spv="SPIRV2", vmfb="MODULE2")
    findings = compare(released, {build.key: module_lock(tmp_path, build)})
    differ = {f.subject: f.why for f in findings if not f.matches}
    assert set(differ) == {"kernels/k.glsl", "build/vulkan/mlp/k.spv", "build/vulkan/mlp.vmfb"}
    assert differ["kernels/k.glsl"].startswith("kernel of main_dispatch_1 differs: sha256")
    assert "kernels/k.glsl differs; build/vulkan/mlp/k.spv differs" in \
           differ["build/vulkan/mlp.vmfb"]


def test_a_different_tool_version_is_reported(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    newer = ModuleBuild(**{**build.__dict__,
                           "tools": {**build.tools, "iree-compile": "IREE 3.14.0"}})
    findings = compare(released, {build.key: module_lock(tmp_path, newer)})
    differ = [f for f in findings if not f.matches]
    assert [(f.subject, f.why) for f in differ] == [
        ("tool iree-compile", "version differs: 'IREE 3.14.0' here, 'IREE 3.13.0' in the release")]


def test_an_altered_archive_and_a_missing_module_are_reported(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    tampered = Release(released.path, released.lock,
                       {**released.members, build.module: _sha("evil")})
    findings = compare(tampered, {build.key: module_lock(tmp_path, build)})
    assert [f.why for f in findings if not f.matches] == [
        "the archive's copy does not match its lock record (the archive was altered)"]
    missing, = compare(released, {})
    assert (missing.subject, missing.matches) == ("build/vulkan/mlp.vmfb", False)
    assert "does not build it" in missing.why


def test_report_lists_every_file_and_ends_with_the_count(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    text = report(released, compare(released, {}))
    assert text.splitlines()[1:] == [
        "vulkan/mlp:",
        "  DIFFERS build/vulkan/mlp.vmfb: this checkout does not build it (model gone, or its "
        "target left out of IREE_TARGETS)",
        "1 of 1 files and tools differ from the release"]


@pytest.mark.parametrize("content, message", [
    (b"plain text", "not a release archive (.tar.gz)"),
    (archive_bytes({"a.vmfb": b"a"}, EPOCH), "it holds no lock.json"),
    (archive_bytes({"lock.json": b"[1]"}, EPOCH), "is not a lock record of format 1"),
    (archive_bytes({"lock.json": b'{"format": 1, "source_date_epoch": 0, '
                                         b'"modules": [{"model": "m"}]}'}, EPOCH),
     "lock.json: module #1 lacks target, source, substitutions, flag_files, tools, module"),
])
def test_reading_something_else_than_a_release_is_a_user_error(tmp_path, content, message):
    path = tmp_path / "r.tar.gz"
    path.write_bytes(content)
    with pytest.raises(UserError) as error:
        read_release(path)
    assert message in str(error.value)


def test_the_objects_an_mlir_kernel_links_are_locked_too(tmp_path):
    kernel = ('hal.executable public @main_dispatch_0 {\n  hal.executable.variant public @v '
              'target(<"llvm-cpu", "embedded-elf-x86_64">) objects([#hal.executable.object<{path '
              '= "kernels/saxpy.o"}>]) {\n  }\n}\n')
    record = {"model": "m", "target": "llvm-cpu", "source": "models/m.mlir",
              "substitutions": [{"model": "m", "target": "llvm-cpu",
                                 "executable": "main_dispatch_0", "export": "main_dispatch_0_x",
                                 "mode": "source", "file": "kernels/k.mlir",
                                 "path": "kernels/k.mlir", "objects": object_paths(kernel),
                                 "flag": "--iree-hal-substitute-executable-source="
                                         "main_dispatch_0=kernels/k.mlir"}]}
    _write(tmp_path, {"models/m.mlir": "module {}\n", "kernels/k.mlir": kernel,
                      "kernels/saxpy.o": "ELF", "build/m.vmfb": "MODULE",
                      "build/m/substitutions.json": json.dumps(record),
                      "build/m/options.flags": "", "build/m/substitutions.flags": ""})
    build = ModuleBuild("m", "llvm-cpu", "build/m.vmfb", "build/m/substitutions.json",
                        "build/m/options.flags", "build/m/substitutions.flags", {})
    sub, = module_lock(tmp_path, build)["substitutions"]
    assert sub["objects"] == [{"path": "kernels/saxpy.o", "sha256": _sha("ELF")}]
    released = _release_of(tmp_path, build)
    (tmp_path / "kernels/saxpy.o").write_text("ELF, rebuilt")
    findings = compare(released, {build.key: module_lock(tmp_path, build)})
    assert [f.why for f in findings if not f.matches][0].startswith(
        "object linked by main_dispatch_0 differs: sha256 ")


def _tar_gz(add) -> bytes:
    """A .tar.gz whose members ``add(tar)`` writes."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        add(tar)
    return gzip.compress(buffer.getvalue())


def _member(tar, name: str, data: bytes = b"", kind=tarfile.REGTYPE, link: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data) if kind == tarfile.REGTYPE else 0
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


EMPTY_LOCK = b'{"format": 1, "source_date_epoch": 0, "modules": []}'


def _refused(tmp_path, content: bytes) -> str:
    path = tmp_path / "r.tar.gz"
    path.write_bytes(content)
    with pytest.raises(UserError) as error:
        read_release(path)
    return str(error.value)


def test_a_lock_listing_no_module_is_refused_whatever_lies_beside_it(tmp_path):
    content = archive_bytes({"lock.json": EMPTY_LOCK,
                             "build/llvm-cpu/mlp.vmfb": b"evil"}, EPOCH)
    assert "lock.json lists no modules: nothing to verify" in _refused(tmp_path, content)


def _good_lock(tmp_path) -> tuple[bytes, bytes]:
    build = _built_module(tmp_path)
    lock = lock_record([module_lock(tmp_path, build)], EPOCH)
    return lock_text(lock).encode(), (tmp_path / build.module).read_bytes()


@pytest.mark.parametrize("extra, message", [
    (lambda tar, lock: _member(tar, "lock.json", lock), "member lock.json is in the archive twice"),
    (lambda tar, lock: _member(tar, "build/vulkan/mlp.vmfb", b"x"),
     "member build/vulkan/mlp.vmfb is in the archive twice"),
    (lambda tar, lock: _member(tar, "build/llvm-cpu/mlp.vmfb", b"evil"),
     "member build/llvm-cpu/mlp.vmfb is not a module its lock.json names"),
    (lambda tar, lock: _member(tar, "../outside.vmfb", b"evil"),
     "member '../outside.vmfb' is a path with an empty, '.' or '..' part"),
    (lambda tar, lock: _member(tar, "/etc/evil", b"evil"), "member '/etc/evil' is not a relative path"),
    (lambda tar, lock: _member(tar, "build/link", kind=tarfile.SYMTYPE, link="/etc/passwd"),
     "member build/link is a symbolic link, not a regular file"),
    (lambda tar, lock: _member(tar, "build/hard", kind=tarfile.LNKTYPE, link="lock.json"),
     "member build/hard is a hard link"),
    (lambda tar, lock: _member(tar, "build/dev", kind=tarfile.CHRTYPE),
     "member build/dev is a character device"),
    (lambda tar, lock: _member(tar, "build/fifo", kind=tarfile.FIFOTYPE), "member build/fifo is a FIFO"),
])
def test_members_the_lock_does_not_name_or_that_are_no_plain_files_are_refused(tmp_path, extra,
                                                                               message):
    lock, module = _good_lock(tmp_path)

    def add(tar):
        _member(tar, "build/vulkan/mlp.vmfb", module)
        _member(tar, "lock.json", lock)
        extra(tar, lock)
    assert message in _refused(tmp_path, _tar_gz(add))
    assert read_release(_write_archive(tmp_path, lock, module)).lock["modules"]


def _write_archive(tmp_path, lock: bytes, module: bytes):
    path = tmp_path / "good.tar.gz"
    path.write_bytes(archive_bytes({"lock.json": lock, "build/vulkan/mlp.vmfb": module},
                                   EPOCH))
    return path


def test_a_gzip_bomb_is_refused_without_reading_it_all(tmp_path):
    import time
    header = tarfile.TarInfo("build/vulkan/mlp.vmfb")
    header.size = 5 << 30
    block = gzip.compress(bytes(16 << 20))       # gzip members concatenated: one stream
    bomb = gzip.compress(header.tobuf()) + block * 320      # 5 GiB of zeros in ~5 MiB
    assert len(bomb) < 6 << 20
    start = time.monotonic()
    message = _refused(tmp_path, bomb)
    assert "decompresses to more than" in message and "Error" not in message
    assert time.monotonic() - start < 30


def test_a_fifo_or_device_as_archive_is_refused_unread(tmp_path):
    import os
    fifo = tmp_path / "fifo.tar.gz"
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO (named pipe)"), ("/dev/zero", "a character device")):
        with pytest.raises(UserError) as error:
            read_release(path)
        assert f"the release archive is {kind}, not a regular file" in str(error.value)


def test_a_lock_listing_a_module_twice_or_at_an_unsafe_path_is_refused(tmp_path):
    lock, module = _good_lock(tmp_path)
    parsed = json.loads(lock)
    twice = {**parsed, "modules": parsed["modules"] * 2}
    content = archive_bytes({"lock.json": json.dumps(twice).encode(),
                             "build/vulkan/mlp.vmfb": module}, EPOCH)
    assert "module #2 (vulkan/mlp) is listed twice" in _refused(tmp_path, content)
    parsed["modules"][0]["module"]["path"] = "../../x.vmfb"
    content = archive_bytes({"lock.json": json.dumps(parsed).encode()}, EPOCH)
    assert "module #1 is at '../../x.vmfb'" in _refused(tmp_path, content)


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                   check=True, capture_output=True)


def test_the_checkout_state_is_the_commit_and_its_uncommitted_changes(tmp_path):
    assert checkout_state(tmp_path) == {"git": NOT_A_REPOSITORY}
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.c").write_text("a\n")
    _git(tmp_path, "add", "a.c")
    _git(tmp_path, "commit", "-q", "-m", "a")
    head = subprocess.run(["git", "-C", str(tmp_path), "rev-parse", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    assert checkout_state(tmp_path) == {"commit": head, "dirty": False, "changes": []}
    assert dirty_refusal(checkout_state(tmp_path)) == ""
    (tmp_path / "a.c").write_text("b\n")
    (tmp_path / "new file.toml").write_text("")
    state = checkout_state(tmp_path)
    assert state == {"commit": head, "dirty": True, "changes": ["M a.c", "?? new file.toml"]}
    assert dirty_refusal(state) == (
        "release: the checkout has uncommitted changes (M a.c, ?? new file.toml); commit them, "
        "or release anyway with ALLOW_DIRTY=yes (the lock record names them)")


def test_a_git_that_does_not_answer_is_an_error(tmp_path, monkeypatch):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").write_text("#!/bin/sh\nexec sleep 60\n")
    (folder / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    with pytest.raises(UserError, match="git did not describe the checkout .* within 0.5 s"):
        checkout_state(tmp_path, timeout=0.5)


def test_the_lock_holds_the_checkout_state():
    state = {"commit": "c" * 40, "dirty": False, "changes": []}
    assert lock_record([], EPOCH, state)["checkout"] == state


def test_a_sparse_member_is_refused_without_reading_its_holes(tmp_path):
    # 807 bytes held a 64 GiB member that verify-release hashed whole.
    import shutil
    import time
    if shutil.which("tar") is None:
        pytest.skip("no tar")
    lock, _ = _good_lock(tmp_path)
    folder = tmp_path / "sparse"
    (folder / "build/vulkan").mkdir(parents=True)
    (folder / "lock.json").write_bytes(lock)
    with open(folder / "build/vulkan/mlp.vmfb", "wb") as f:
        f.truncate(64 << 30)
    archive = tmp_path / "sparse.tar.gz"
    subprocess.run(["tar", "--sparse", "-czf", str(archive), "-C", str(folder), "lock.json",
                    "build/vulkan/mlp.vmfb"], check=True, timeout=120)
    assert archive.stat().st_size < 64 << 10
    start = time.monotonic()
    assert "member build/vulkan/mlp.vmfb is a sparse file, which no release holds" in \
        _refused(tmp_path, archive.read_bytes())
    assert time.monotonic() - start < 30


def test_an_archive_appended_to_a_release_is_refused(tmp_path):
    lock, module = _good_lock(tmp_path)
    release = archive_bytes({"lock.json": lock, "build/vulkan/mlp.vmfb": module}, EPOCH)
    appended = archive_bytes({"build/vulkan/mlp.vmfb": b"evil"}, EPOCH)
    assert "holds data after the end of its tar archive" in _refused(tmp_path, release + appended)


@pytest.mark.parametrize("edit, message", [
    (lambda m: m.update(source="models/mlp.mlir"), "module #1.source is str, not an object"),
    (lambda m: m.update(tools=["iree-compile"]), "module #1.tools is list, not an object"),
    (lambda m: m["flag_files"]["options"].update(text=3),
     "module #1.flag_files.options.text is int, not str"),
    (lambda m: m["substitutions"].append({"executable": "x"}), "module #1.substitutions[1] "
     "lacks mode"),
])
def test_a_lock_entry_of_the_wrong_shape_is_one_line(tmp_path, edit, message):
    lock, module = _good_lock(tmp_path)
    parsed = json.loads(lock)
    edit(parsed["modules"][0])
    content = archive_bytes({"lock.json": json.dumps(parsed).encode(),
                             "build/vulkan/mlp.vmfb": module}, EPOCH)
    assert f"lock.json: {message}" in _refused(tmp_path, content)


def test_a_lock_nested_too_deep_is_one_line(tmp_path):
    content = archive_bytes({"lock.json": b"[" * 100000}, EPOCH)
    assert "lock.json nests deeper than any lock record" in _refused(tmp_path, content)
