"""Release archives and lock records: determinism, the timestamp, and comparing a checkout with a release."""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile

import pytest

from iree_kernels import release
from iree_kernels.errors import UserError
from iree_kernels.manifest import object_paths

EPOCH = 1_700_000_000


def test_archive_depends_only_on_members_and_time():
    members = {"build/b.vmfb": b"b" * 100, "lock.json": b"{}\n", "build/a.vmfb": b"a"}
    first = release.archive_bytes(members, EPOCH)
    again = release.archive_bytes(dict(reversed(list(members.items()))), EPOCH)
    assert first == again
    assert release.archive_bytes(members, EPOCH + 1) != first


def test_archive_headers_carry_no_time_owner_or_name_of_this_machine():
    data = release.archive_bytes({"z.vmfb": b"z", "a.vmfb": b"a"}, EPOCH)
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
    assert release.source_date_epoch(tmp_path, {"SOURCE_DATE_EPOCH": "42"},
                                     commit_time=lambda root: 7) == 42
    assert release.source_date_epoch(tmp_path, {}, commit_time=lambda root: 7) == 7
    assert release.source_date_epoch(tmp_path, {}, commit_time=lambda root: None) == 0


def test_a_folder_outside_any_git_repository_has_no_commit_time(tmp_path):
    assert release.git_commit_time(tmp_path) is None


@pytest.mark.parametrize("text", ["yesterday", "-5", "1.5"])
def test_malformed_source_date_epoch_is_a_user_error(text):
    with pytest.raises(UserError, match="SOURCE_DATE_EPOCH must be a whole number"):
        release.source_date_epoch(".", {"SOURCE_DATE_EPOCH": text})


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _write(root, files: dict[str, str]) -> None:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def _built_module(root, glsl="void main() {}\n", spv="SPIRV", vmfb="MODULE") -> release.ModuleBuild:
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
    return release.ModuleBuild("mlp", "vulkan", "build/vulkan/mlp.vmfb",
                               "build/vulkan/mlp/substitutions.json",
                               "build/vulkan/mlp/options.flags",
                               "build/vulkan/mlp/substitutions.flags",
                               {"iree-compile": "IREE 3.13.0", "glslangValidator": "11:12.0.0"})


def test_lock_entry_hashes_model_kernel_compiled_kernel_and_module(tmp_path):
    entry = release.module_lock(tmp_path, _built_module(tmp_path))
    assert entry["source"] == {"path": "models/mlp.mlir", "sha256": _sha("module {}\n")}
    sub, = entry["substitutions"]
    assert sub["kernel"] == {"path": "kernels/k.glsl", "sha256": _sha("void main() {}\n")}
    assert sub["compiled"] == {"path": "build/vulkan/mlp/k.spv", "sha256": _sha("SPIRV")}
    assert "wrapper" not in sub
    assert entry["flag_files"]["options"]["text"] == "--iree-hal-target-device=vulkan\n"
    assert entry["tools"] == {"glslangValidator": "11:12.0.0", "iree-compile": "IREE 3.13.0"}
    assert entry["module"] == {"path": "build/vulkan/mlp.vmfb", "sha256": _sha("MODULE")}


def _release_of(root, build) -> release.Release:
    lock = release.lock_record([release.module_lock(root, build)], EPOCH)
    archive = root / "release.tar.gz"
    archive.write_bytes(release.archive_bytes(
        {release.LOCK_MEMBER: release.lock_text(lock).encode(),
         build.module: (root / build.module).read_bytes()}, EPOCH))
    return release.read_release(archive)


def test_an_unchanged_checkout_matches_its_release(tmp_path):
    build = _built_module(tmp_path)
    findings = release.compare(_release_of(tmp_path, build),
                               {build.key: release.module_lock(tmp_path, build)})
    assert all(f.matches for f in findings)
    assert {f.subject for f in findings} >= {"models/mlp.mlir", "kernels/k.glsl",
                                             "build/vulkan/mlp/k.spv", "tool iree-compile",
                                             "build/vulkan/mlp.vmfb"}


def test_a_changed_kernel_is_named_as_the_reason_the_module_differs(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    _built_module(tmp_path, glsl="void main() { x(); }\n", spv="SPIRV2", vmfb="MODULE2")
    findings = release.compare(released, {build.key: release.module_lock(tmp_path, build)})
    differ = {f.subject: f.why for f in findings if not f.matches}
    assert set(differ) == {"kernels/k.glsl", "build/vulkan/mlp/k.spv", "build/vulkan/mlp.vmfb"}
    assert differ["kernels/k.glsl"].startswith("kernel of main_dispatch_1 differs: sha256")
    assert "kernels/k.glsl differs; build/vulkan/mlp/k.spv differs" in \
           differ["build/vulkan/mlp.vmfb"]


def test_a_different_tool_version_is_reported(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    newer = release.ModuleBuild(**{**build.__dict__,
                                   "tools": {**build.tools, "iree-compile": "IREE 3.14.0"}})
    findings = release.compare(released, {build.key: release.module_lock(tmp_path, newer)})
    differ = [f for f in findings if not f.matches]
    assert [(f.subject, f.why) for f in differ] == [
        ("tool iree-compile", "version differs: 'IREE 3.14.0' here, 'IREE 3.13.0' in the release")]


def test_an_altered_archive_and_a_missing_module_are_reported(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    tampered = release.Release(released.path, released.lock,
                               {**released.members, build.module: _sha("evil")})
    findings = release.compare(tampered, {build.key: release.module_lock(tmp_path, build)})
    assert [f.why for f in findings if not f.matches] == [
        "the archive's copy does not match its lock record (the archive was altered)"]
    missing, = release.compare(released, {})
    assert (missing.subject, missing.matches) == ("build/vulkan/mlp.vmfb", False)
    assert "does not build it" in missing.why


def test_report_lists_every_file_and_ends_with_the_count(tmp_path):
    build = _built_module(tmp_path)
    released = _release_of(tmp_path, build)
    text = release.report(released, release.compare(released, {}))
    assert text.splitlines()[1:] == [
        "vulkan/mlp:",
        "  DIFFERS build/vulkan/mlp.vmfb: this checkout does not build it (model gone, or its "
        "target left out of IREE_TARGETS)",
        "1 of 1 files and tools differ from the release"]


@pytest.mark.parametrize("content, message", [
    (b"plain text", "not a release archive (.tar.gz)"),
    (release.archive_bytes({"a.vmfb": b"a"}, EPOCH), "it holds no lock.json"),
    (release.archive_bytes({"lock.json": b"[1]"}, EPOCH), "is not a lock record of format 1"),
    (release.archive_bytes({"lock.json": b'{"format": 1, "source_date_epoch": 0, '
                                         b'"modules": [{"model": "m"}]}'}, EPOCH),
     "lock.json: module #1 lacks target, source, substitutions, flag_files, tools, module"),
])
def test_reading_something_else_than_a_release_is_a_user_error(tmp_path, content, message):
    path = tmp_path / "r.tar.gz"
    path.write_bytes(content)
    with pytest.raises(UserError) as error:
        release.read_release(path)
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
    build = release.ModuleBuild("m", "llvm-cpu", "build/m.vmfb", "build/m/substitutions.json",
                                "build/m/options.flags", "build/m/substitutions.flags", {})
    sub, = release.module_lock(tmp_path, build)["substitutions"]
    assert sub["objects"] == [{"path": "kernels/saxpy.o", "sha256": _sha("ELF")}]
    released = _release_of(tmp_path, build)
    (tmp_path / "kernels/saxpy.o").write_text("ELF, rebuilt")
    findings = release.compare(released, {build.key: release.module_lock(tmp_path, build)})
    assert [f.why for f in findings if not f.matches][0].startswith(
        "object linked by main_dispatch_0 differs: sha256 ")
