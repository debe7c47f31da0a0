"""End to end: release archives reproduced in other checkouts, verify-release, and the shared build cache."""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import REPO, Project, made_once
from iree_kernels.release.archive import archive_bytes
from iree_kernels.release.lock import lock_text
from iree_kernels.core import toolchains

pytestmark = pytest.mark.skipif(toolchains.on_path("glslangValidator") is None,
                                reason="no glslangValidator (./setup.sh installs glslang-tools)")

EPOCH = "1700000000"
SHADER = "kernels/vulkan/mlp_bias_relu_rowsum.glsl"
MANIFEST = f"""
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan"]

[models.elementwise]
source = "models/elementwise.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/llvm-cpu/mlp_square_relu.mlir"

[[substitutions]]
model = "mlp"
target = "vulkan"
executable = "main_dispatch_1"
file = "{SHADER}"
"""
FILES = ["models/mlp.mlir", "models/elementwise.mlir", "kernels/llvm-cpu/mlp_square_relu.mlir",
         SHADER]
MODULES = ["build/llvm-cpu/elementwise.vmfb", "build/llvm-cpu/mlp.vmfb", "build/vulkan/mlp.vmfb"]
ARCHIVE = "build/release/iree-kernels-release.tar.gz"
LOCK = "build/release/iree-kernels-release.lock.json"
COMPILERS = ("IREE", "FRONTEND", "PTX", "SPIRV", "CC")
EXPECTED = """
[[case]]
function = "main"
inputs = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]
outputs = ["4xf32=344 344 344 344"]
targets = ["llvm-cpu"]
"""


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    monkeypatch.delenv("IREE_KERNELS_CACHE_DIR", raising=False)


def checkout(root: Path) -> Project:
    project = Project(root)
    for path in FILES:
        project.copy(REPO / path, path)
    project.write("kernels/demo.toml", MANIFEST)
    return project


@pytest.fixture
def released(tmp_path_factory, tmp_path) -> Project:
    """checkout() after ``scons release``: released once per run, copied for each test."""
    def release_once(folder):
        checkout(folder).scons("release")
    return Project.copy_of(made_once(tmp_path_factory, "released", release_once),
                           tmp_path / "repo")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_release_is_byte_identical_in_checkouts_at_different_paths(tmp_path):
    first = checkout(tmp_path / "a" / "repo")
    second = checkout(tmp_path / "b" / "somewhere" / "deeper" / "repo")
    for project in (first, second):     # the second a process of its own: another hash seed
        project.scons("release", fresh=project is second)
    for path in [ARCHIVE, LOCK, *MODULES]:
        assert sha256(first.root / path) == sha256(second.root / path), path
    with tarfile.open(first.root / ARCHIVE) as tar:
        assert tar.getnames() == [*MODULES, "lock.json"]
        assert {m.mtime for m in tar.getmembers()} == {int(EPOCH)}
        assert tar.extractfile("lock.json").read() == (first.root / LOCK).read_bytes()
    assert first.scons("--question", "release", expect_ok=False).returncode == 0


def test_lock_records_inputs_flag_files_tools_and_outputs(released):
    project = released
    lock = json.loads(project.read(LOCK))
    assert lock["source_date_epoch"] == int(EPOCH)
    assert [(m["target"], m["model"]) for m in lock["modules"]] == [
        ("llvm-cpu", "elementwise"), ("llvm-cpu", "mlp"), ("vulkan", "mlp")]
    vulkan = lock["modules"][2]
    assert vulkan["source"]["sha256"] == sha256(project.root / "models/mlp.mlir")
    sub, = vulkan["substitutions"]
    assert sub["kernel"] == {"path": SHADER, "sha256": sha256(project.root / SHADER)}
    assert sub["compiled"]["path"] == "build/vulkan/mlp/main_dispatch_1.spv"
    assert sub["compiled"]["sha256"] == sha256(project.root / sub["compiled"]["path"])
    assert vulkan["flag_files"]["substitutions"]["text"] == \
        project.read("build/vulkan/mlp/substitutions.flags")
    assert sorted(vulkan["tools"]) == ["glslangValidator", "iree-compile"]
    assert "IREE compiler version" in vulkan["tools"]["iree-compile"]
    assert vulkan["module"]["sha256"] == sha256(project.root / "build/vulkan/mlp.vmfb")


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                           *args], check=True, capture_output=True, text=True).stdout.strip()


def committed_checkout(root: Path) -> Project:
    project = checkout(root)
    project.write(".gitignore", "build/\n.sconsign*\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "release me")
    return project


def test_the_lock_records_the_commit_and_a_dirty_checkout_is_refused(tmp_path):
    project = committed_checkout(tmp_path / "a" / "repo")
    commit = git(project.root, "rev-parse", "HEAD")
    project.scons("release")
    assert json.loads(project.read(LOCK))["checkout"] == {"commit": commit, "dirty": False,
                                                         "changes": []}
    # A clean clone of the commit elsewhere releases the same bytes, commit included.
    clone = tmp_path / "b" / "elsewhere" / "repo"
    clone.parent.mkdir(parents=True)
    git(tmp_path, "clone", "-q", str(project.root), str(clone))
    Project(clone).scons("release")
    for path in [ARCHIVE, LOCK]:
        assert sha256(project.root / path) == sha256(clone / path), path

    shader = project.root / SHADER
    shader.write_text(shader.read_text().replace("0.0)", "1.0)"))
    project.write("kernels/extra.glsl", "// not committed\n")
    refused = project.scons("release", expect_ok=False)
    assert refused.returncode != 0 and "Traceback" not in refused.output
    errors = [line for line in refused.output.splitlines() if line.startswith("scons: ***")]
    assert errors == [f"scons: *** release: the checkout has uncommitted changes (?? "
                      f"kernels/extra.glsl, M {SHADER}); commit them, or release anyway with "
                      "ALLOW_DIRTY=yes (the lock record names them)"], refused.output
    assert refused.steps == []                  # refused before anything builds
    assert json.loads(project.read(LOCK))["checkout"]["dirty"] is False

    project.scons("release", "ALLOW_DIRTY=yes")
    lock = json.loads(project.read(LOCK))
    assert lock["checkout"] == {"commit": commit, "dirty": True,
                                "changes": ["?? kernels/extra.glsl", f"M {SHADER}"]}
    # Committing the change releases again, with the new commit and clean.
    git(project.root, "add", "-A")
    git(project.root, "commit", "-q", "-m", "the change")
    project.scons("release")
    assert json.loads(project.read(LOCK))["checkout"] == {
        "commit": git(project.root, "rev-parse", "HEAD"), "dirty": False, "changes": []}


def test_a_checkout_outside_git_is_recorded_as_such(tmp_path):
    project = checkout(tmp_path / "repo")
    project.scons("release", "IREE_TARGETS=llvm-cpu")
    assert json.loads(project.read(LOCK))["checkout"] == {"git": "not a git repository"}


def test_release_check_makes_a_release_wait_for_a_strict_check(tmp_path):
    project = checkout(tmp_path / "repo")       # no model has expected outputs
    refused = project.scons("release", "RELEASE_CHECK=yes", "IREE_TARGETS=llvm-cpu",
                            expect_ok=False)
    assert refused.returncode != 0
    assert re.search(r"^scons: \*\*\* \[\S+\] check: skipped build/llvm-cpu/\w+\.vmfb: model "
                     r"'\w+' has no expected outputs; .* \(RELEASE_CHECK=yes\)$", refused.output,
                     re.M), refused.output
    assert not (project.root / LOCK).exists() and not (project.root / ARCHIVE).exists()
    assert project.scons("release", "IREE_TARGETS=llvm-cpu").ok     # without it: released


def test_verify_release_names_the_changed_input(released, tmp_path):
    releasing = released
    archive = str(releasing.root / ARCHIVE)
    other = checkout(tmp_path / "dev" / "repo")
    agreed = other.scons("verify-release", f"ARCHIVE={archive}")
    assert "all 19 files and tools match the release" in agreed.output
    shader = other.root / SHADER
    assert "0.0)" in shader.read_text()
    shader.write_text(shader.read_text().replace("0.0)", "1.0)"))
    differs = other.scons("verify-release", f"ARCHIVE={archive}", expect_ok=False)
    assert differs.returncode != 0
    assert "Traceback" not in differs.output
    lines = [line.strip() for line in differs.stdout.splitlines()]
    assert f"DIFFERS {SHADER}: kernel of main_dispatch_1 differs" in "\n".join(lines)
    module = next(line for line in lines if line.startswith("DIFFERS build/vulkan/mlp.vmfb"))
    assert f"{SHADER} differs" in module
    assert "ok      build/llvm-cpu/mlp.vmfb" in lines
    assert "3 of 19 files and tools differ from the release" in differs.output


def test_verify_release_reports_a_different_tool_version(released, tmp_path):
    project = released
    lock = json.loads(project.read(LOCK))
    for module in lock["modules"]:
        module["tools"]["iree-compile"] = "IREE compiler version 0.0.1"
    members = {"lock.json": lock_text(lock).encode()}
    members.update({path: (project.root / path).read_bytes() for path in MODULES})
    (tmp_path / "old.tar.gz").write_bytes(archive_bytes(members, int(EPOCH)))
    build = project.scons("verify-release", f"ARCHIVE={tmp_path / 'old.tar.gz'}",
                          expect_ok=False)
    assert build.returncode != 0
    assert "DIFFERS tool iree-compile: version differs:" in build.output
    assert "'IREE compiler version 0.0.1' in the release" in build.output
    assert "3 of 19 files and tools differ" in build.output


def test_verify_release_without_an_archive_says_what_it_needs(tmp_path):
    project = checkout(tmp_path / "repo")
    build = project.scons("verify-release", expect_ok=False)
    assert build.returncode == 2
    assert "verify-release needs the archive to check: scons verify-release ARCHIVE=" \
        in build.output
    missing = project.scons("verify-release", "ARCHIVE=nowhere.tar.gz", expect_ok=False)
    assert "nowhere.tar.gz: release archive not found" in missing.output
    assert "Traceback" not in build.output + missing.output


def compilers_run(build) -> list[str]:
    return [target for kind, target in build.steps if kind in COMPILERS]


def test_second_checkout_takes_everything_from_the_shared_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    writer = checkout(tmp_path / "ci" / "repo")
    # A front end and a compile per module with kernels (2), one plain compile of the module
    # without (elementwise on llvm-cpu), one shader.
    assert len(compilers_run(writer.scons(f"CACHE_DIR={cache}", "release"))) == 6
    entries = sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file())
    monkeypatch.setenv("IREE_KERNELS_CACHE_DIR", str(cache))
    reader = checkout(tmp_path / "dev" / "repo")
    build = reader.scons("CACHE_READONLY=1", "release")
    assert compilers_run(build) == []
    for path in MODULES:
        assert f"Retrieved `{path}' from cache" in build.output
    for path in [ARCHIVE, *MODULES]:
        assert sha256(reader.root / path) == sha256(writer.root / path)
    assert sorted(p.relative_to(cache) for p in cache.rglob("*") if p.is_file()) == entries


def test_cache_hits_when_the_tools_live_elsewhere_too(tmp_path, monkeypatch):
    """Each checkout has its own .venv: a program's path must not be part of the cache key."""
    cache = tmp_path / "cache"
    checkout(tmp_path / "ci" / "repo").scons(f"CACHE_DIR={cache}")
    elsewhere = tmp_path / "other-venv" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "iree-compile").symlink_to(toolchains.iree_compile())
    monkeypatch.setenv("IREE_COMPILE", str(elsewhere / "iree-compile"))
    build = checkout(tmp_path / "dev" / "repo").scons(f"CACHE_DIR={cache}", "VERBOSE=1")
    assert str(elsewhere / "iree-compile") not in build.stdout     # nothing was compiled
    for path in MODULES:
        assert f"Retrieved `{path}' from cache" in build.output


def test_checks_run_on_each_machine_instead_of_coming_from_the_cache(tmp_path):
    cache = tmp_path / "cache"
    for name in ("ci", "dev"):
        project = checkout(tmp_path / name / "repo")
        project.write("models/mlp.expected.toml", EXPECTED)
        build = project.scons(f"CACHE_DIR={cache}", "build/llvm-cpu/mlp.check")
        assert build.ran("CHECK") == ["build/llvm-cpu/mlp.vmfb"]
    assert "Retrieved `build/llvm-cpu/mlp.vmfb' from cache" in build.output


def cache_entry_of(cache: Path, built: Path) -> Path:
    """The entry whose digest record names the content of ``built``."""
    digest = sha256(built)
    return next(p.with_suffix("") for p in cache.glob("??/*.sha256")
                if f"{digest}  {p.stem}\n" in p.read_text())


@pytest.mark.parametrize("readonly", [False, True], ids=["read-write", "read-only"])
def test_a_corrupted_cache_entry_is_rebuilt_not_shipped(tmp_path, readonly):
    cache = tmp_path / "cache"
    writer = checkout(tmp_path / "ci" / "repo")
    writer.scons(f"CACHE_DIR={cache}")
    module = "build/llvm-cpu/mlp.vmfb"
    entry = cache_entry_of(cache, writer.root / module)
    entry.write_bytes(entry.read_bytes()[:-16] + b"\0" * 16)
    reader = checkout(tmp_path / "dev" / "repo")
    build = reader.scons(f"CACHE_DIR={cache}", *(["--cache-readonly"] if readonly else []))
    assert build.made_modules() == [module]
    assert f"cache entry {entry} for {module} is not used: it does not have the SHA-256 recorded" \
        in build.output
    assert sha256(reader.root / module) == sha256(writer.root / module)
    if readonly:
        assert "entry kept (read-only cache)" in build.output
    else:
        assert "entry removed" in build.output
        assert sha256(entry) == sha256(writer.root / module)   # written again, whole
