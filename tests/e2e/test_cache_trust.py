"""End to end: what a build takes from a shared cache someone else can write (docs/caching.md, "Cache trust model").

Entries are regular files only; with a signing key a reader takes only entries
signed with it; the key shows up nowhere; the cache's files get the umask's
permissions. Both caches: SCons's CacheDir (CACHE_DIR) and the codegen cache.
"""
from __future__ import annotations

import hashlib
import re
import stat
import sys
from pathlib import Path

import pytest

from conftest import MLP_SQUARE_RELU, REPO, Project, umask
from iree_kernels.core import toolchains
from iree_kernels.cache.integrity import Trust

MANIFEST = MLP_SQUARE_RELU
FILES = ["models/mlp.mlir", "kernels/llvm-cpu/mlp_square_relu.mlir"]
MODULE = "build/llvm-cpu/mlp.vmfb"
KEY = "e2e-cache-key-7f3a9c1d5b2e8f40a6"
OTHER_KEY = "another-teams-key-0d4e2a91c7b3"
CODEGEN = ("EXECUTABLE_CACHE=llvm-cpu",)


@pytest.fixture(autouse=True)
def no_key(monkeypatch):
    for name in ("IREE_KERNELS_CACHE_DIR", "IREE_KERNELS_CACHE_KEY", "IREE_KERNELS_CACHE_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)


def checkout(root: Path) -> Project:
    project = Project(root)
    for path in FILES:
        project.copy(REPO / path, path)
    project.write("kernels/demo.toml", MANIFEST)
    return project


def build(project: Project, monkeypatch, *args: str, key: str | None = None,
          expect_ok: bool = True):
    with monkeypatch.context() as m:
        if key is not None:
            m.setenv("IREE_KERNELS_CACHE_KEY", key)
        return project.scons(*args, expect_ok=expect_ok)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def entry_of(cache: Path, built: Path) -> Path:
    """The SCons cache entry whose digest record names the content of ``built``."""
    digest = sha256(built)
    return next(p.with_suffix("") for p in cache.glob("??/*.sha256")
                if f"{digest}  {p.stem}\n" in p.read_text())


def warnings(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("scons: warning:")]


@pytest.mark.parametrize("readonly", [False, True], ids=["read-write", "read-only"])
def test_a_linked_entry_is_not_followed_and_the_output_is_a_regular_file(tmp_path, monkeypatch,
                                                                         readonly):
    cache = tmp_path / "cache"
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, monkeypatch, f"CACHE_DIR={cache}")
    entry = entry_of(cache, writer.root / MODULE)
    outside = tmp_path / "outside.vmfb"              # the very content the record names
    outside.write_bytes(entry.read_bytes())
    outside.chmod(0o444)
    entry.unlink()
    entry.symlink_to(outside)
    reader = checkout(tmp_path / "dev" / "repo")
    done = build(reader, monkeypatch, f"CACHE_DIR={cache}",
                 *(["CACHE_READONLY=1"] if readonly else []))
    assert done.made_modules() == [MODULE]
    action = "kept (read-only cache)" if readonly else "removed"
    assert warnings(done.output) == [
        f"scons: warning: cache entry {entry} for {MODULE} is not used: it is a symbolic link; "
        f"entry {action}, building the file instead"]
    module = reader.root / MODULE
    assert not module.is_symlink() and stat.S_ISREG(module.lstat().st_mode)
    assert sha256(module) == sha256(writer.root / MODULE)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o444           # not chmodded through the link
    assert entry.is_symlink() == readonly
    if not readonly:
        assert sha256(entry) == sha256(module)                       # stored again, as a file


def test_an_entry_signed_with_the_key_is_taken_and_no_step_runs(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    build(checkout(tmp_path / "ci" / "repo"), monkeypatch, f"CACHE_DIR={cache}", key=KEY)
    done = build(checkout(tmp_path / "dev" / "repo"), monkeypatch, f"CACHE_DIR={cache}",
                 "CACHE_READONLY=1", key=KEY)
    assert done.steps == [] and warnings(done.output) == []
    assert f"Retrieved `{MODULE}' from cache" in done.output


def forge(entry: Path, content: bytes, how: str) -> None:
    """What someone who can write the cache but has no key (or another key) can do."""
    record = entry.with_name(entry.name + ".sha256")
    digests = {entry.name: hashlib.sha256(content).hexdigest()}
    entry.write_bytes(content)
    if how == "unsigned record":
        record.write_bytes(Trust().record(digests))
    elif how == "signature kept":
        old = record.read_text()
        record.write_text(re.sub(r"^[0-9a-f]{64}", digests[entry.name], old, flags=re.M))
    elif how == "another key":
        record.write_bytes(Trust(OTHER_KEY.encode()).record(digests))


@pytest.mark.parametrize("how, reason", [
    ("unsigned record", "it is not signed, and this build verifies signatures"),
    ("signature kept", "its signature does not match its digest record"),
    ("another key", "it is signed with another key"),
])
def test_a_swapped_entry_is_refused_by_a_reader_with_the_key(tmp_path, monkeypatch, how, reason):
    cache = tmp_path / "cache"
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, monkeypatch, f"CACHE_DIR={cache}", key=KEY)
    entry = entry_of(cache, writer.root / MODULE)
    injected = entry.read_bytes()[:-16] + b"injected module!"
    forge(entry, injected, how)
    keyless = build(checkout(tmp_path / "keyless" / "repo"), monkeypatch, f"CACHE_DIR={cache}",
                    "CACHE_READONLY=1")
    # A reader without a key trusts whoever can write the folder:
    assert keyless.ran("IREE") == [] and warnings(keyless.output) == []
    assert (tmp_path / "keyless/repo" / MODULE).read_bytes() == injected
    reader = checkout(tmp_path / "dev" / "repo")
    done = build(reader, monkeypatch, f"CACHE_DIR={cache}", "CACHE_READONLY=1", key=KEY)
    assert done.made_modules() == [MODULE]
    assert len(warnings(done.output)) == 1
    assert f"cache entry {entry} for {MODULE} is not used: {reason}" in done.output
    assert sha256(reader.root / MODULE) == sha256(writer.root / MODULE)


def test_unsigned_entries_are_refused_with_a_key_and_stored_again_signed(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    build(checkout(tmp_path / "ci" / "repo"), monkeypatch, f"CACHE_DIR={cache}")
    signer = build(checkout(tmp_path / "signer" / "repo"), monkeypatch, f"CACHE_DIR={cache}",
                   key=KEY)
    assert signer.made_modules() == [MODULE]
    refused = warnings(signer.output)
    assert refused and all("is not used: it is not signed" in w for w in refused)
    assert "Retrieved" not in signer.output
    for record in cache.glob("??/*.sha256"):
        assert f"# hmac-sha256 {Trust(KEY.encode()).key_id} " in record.read_text()
    again = build(checkout(tmp_path / "dev" / "repo"), monkeypatch, f"CACHE_DIR={cache}",
                  "CACHE_READONLY=1", key=KEY)
    assert again.steps == [] and warnings(again.output) == []


def test_requiring_signatures_without_a_key_is_one_line(tmp_path, monkeypatch):
    done = build(checkout(tmp_path / "repo"), monkeypatch, f"CACHE_DIR={tmp_path / 'cache'}",
                 "CACHE_REQUIRE_SIGNED=1", expect_ok=False)
    assert done.returncode == 2 and "Traceback" not in done.output
    assert done.output.splitlines()[0].startswith(
        "scons: *** CACHE_REQUIRE_SIGNED needs the cache signing key: set "
        "IREE_KERNELS_CACHE_KEY_FILE")
    assert not (tmp_path / "repo/build").exists()


@pytest.mark.parametrize("given", ["file", "variable"])
def test_the_key_is_in_no_output_file_command_line_or_tool_environment(tmp_path, monkeypatch,
                                                                       given):
    """The key, from a file (CI's way) or a variable: not printed, not written, not passed to any tool."""
    if given == "file":
        key_file = tmp_path / "secrets" / "cache.key"
        key_file.parent.mkdir()
        key_file.write_text(KEY + "\n")
        monkeypatch.setenv("IREE_KERNELS_CACHE_KEY_FILE", str(key_file))
    else:
        monkeypatch.setenv("IREE_KERNELS_CACHE_KEY", KEY)
    seen = tmp_path / "tool-environments"
    seen.mkdir()
    wrapper = tmp_path / "bin" / "iree-compile"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!{sys.executable}\nimport os, sys\n"
                       f"open(os.path.join({str(seen)!r}, str(os.getpid())), 'w')"
                       ".write(repr(dict(os.environ)) + repr(sys.argv))\n"
                       f"os.execv({toolchains.iree_compile()!r}, "
                       f"[{toolchains.iree_compile()!r}] + sys.argv[1:])\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("IREE_COMPILE", str(wrapper))
    cache = tmp_path / "cache"
    project = checkout(tmp_path / "repo")
    outputs = [project.scons(f"CACHE_DIR={cache}", "VERBOSE=1", *CODEGEN),
               project.scons("-h"),
               checkout(tmp_path / "dev" / "repo").scons(f"CACHE_DIR={cache}", "VERBOSE=1",
                                                         *CODEGEN)]
    assert codegen_counts(outputs[0].output)[0] == 0                  # it compiled entries
    assert len(list(seen.iterdir())) >= 3                             # version, dump, codegen...
    searched = [o.output.encode() for o in outputs]
    for folder in (cache, project.root, seen):
        searched += [p.read_bytes() for p in folder.rglob("*") if p.is_file()]
    assert any(b"# hmac-sha256 " in text for text in searched)       # it did sign
    for text in searched:
        assert KEY.encode() not in text and KEY.encode().hex().encode() not in text


def codegen_counts(output: str) -> tuple[int, int]:
    """How many executables the codegen cache gave, and how many it compiled."""
    found = re.search(r"^codegen cache: \S+: (\d+) cached, (\d+) compiled", output, re.M)
    assert found, output
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize("how", ["unsigned record", "signed with the key", "link"])
def test_a_codegen_cache_entry_is_taken_only_as_signed_regular_files(tmp_path, monkeypatch, how):
    shared = tmp_path / "codegen-cache"
    settings = (*CODEGEN, f"CODEGEN_CACHE_DIR={shared}")
    build(checkout(tmp_path / "ci" / "repo"), monkeypatch, *settings, key=KEY)
    entries = sorted(shared.glob("llvm-cpu/*.executable.mlir"))
    translated = entries[0]
    digests = translated.with_name(translated.name.replace(".executable.mlir", ".sha256"))
    if how == "unsigned record":
        text = translated.read_text().replace("hal.executable", "hal.executable ", 1)
        translated.write_text(text)
        digests.write_bytes(Trust().record({translated.name: sha256(translated)}))
    elif how == "link":
        outside = tmp_path / "outside.mlir"
        outside.write_bytes(translated.read_bytes())
        translated.unlink()
        translated.symlink_to(outside)
    done = build(checkout(tmp_path / "dev" / "repo"), monkeypatch, *settings, key=KEY)
    if how == "signed with the key":
        assert codegen_counts(done.output) == (len(entries), 0) and done.ran("CODEGEN") == []
        assert warnings(done.output) == []
        return
    reason = {"unsigned record": "it is not signed",
              "link": f"{translated.name} is a symbolic link"}[how]
    (warning,) = warnings(done.output)
    assert warning.startswith(f"scons: warning: codegen cache entry {digests} is not used: {reason}")
    assert warning.endswith("; entry removed, compiling it again")
    assert codegen_counts(done.output) == (len(entries) - 1, 1)
    assert stat.S_ISREG(translated.lstat().st_mode)                  # compiled again, a file


@pytest.mark.parametrize("mask", [0o022, 0o027], ids=["umask-022", "umask-027"])
def test_the_shared_cache_and_the_build_get_the_umasks_permissions(tmp_path, monkeypatch, mask):
    cache = tmp_path / "cache"
    project = checkout(tmp_path / "repo")
    with umask(mask):
        build(project, monkeypatch, f"CACHE_DIR={cache}", *CODEGEN, key=KEY)
    assert list(cache.glob("codegen/llvm-cpu/*.sha256")) and list(cache.glob("??/*.sha256"))
    modes = {str(p.relative_to(tmp_path)): oct(stat.S_IMODE(p.lstat().st_mode))
             for folder in (cache, project.root / "build") for p in folder.rglob("*")}
    wanted = {path: oct((0o777 if (tmp_path / path).is_dir() else 0o666) & ~mask)
              for path in modes}
    assert modes == wanted
