"""End to end: checkouts sharing an HTTP remote cache (REMOTE_CACHE_URL), a real nginx serving it.

The server (tests/cache_server.py) is nginx with WebDAV PUT on 127.0.0.1,
laid out as Bazel's HTTP cache. SCons's cache and the codegen cache
(EXECUTABLE_CACHE=llvm-cpu) both go through it.
"""
from __future__ import annotations

import hashlib
import re
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from cache_server import NGINX, SKIP_REASON, CacheServer
from conftest import REPO, Project
from harness import parse_steps, scons_argv

pytestmark = pytest.mark.skipif(NGINX is None, reason=SKIP_REASON)

MANIFEST = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]

[models.elementwise]
source = "models/elementwise.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/llvm-cpu/mlp_square_relu.mlir"
"""
FILES = ["models/mlp.mlir", "models/elementwise.mlir", "kernels/llvm-cpu/mlp_square_relu.mlir"]
MODULES = ["build/llvm-cpu/elementwise.vmfb", "build/llvm-cpu/mlp.vmfb"]
COMPILERS = ("IREE", "FRONTEND", "CODEGEN")
FAST = ("REMOTE_CACHE_TIMEOUT=2", "REMOTE_CACHE_RETRIES=1", "EXECUTABLE_CACHE=llvm-cpu")
GAVE_UP = "; building without it"


@pytest.fixture(autouse=True)
def no_developer_settings(monkeypatch, tmp_path):
    for name in ("IREE_KERNELS_CACHE_DIR", "IREE_KERNELS_REMOTE_CACHE_URL",
                 "IREE_KERNELS_REMOTE_CACHE_TOKEN", "IREE_KERNELS_CACHE_KEY",
                 "IREE_KERNELS_CACHE_KEY_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))


@pytest.fixture
def server(tmp_path):
    with CacheServer(tmp_path / "server") as running:
        yield running


def checkout(root: Path) -> Project:
    project = Project(root)
    for path in FILES:
        project.copy(REPO / path, path)
    project.write("kernels/demo.toml", MANIFEST)
    return project


def build(project: Project, url: str, *args: str, expect_ok: bool = True):
    return project.scons(f"REMOTE_CACHE_URL={url}", *FAST, *args, expect_ok=expect_ok)


def compilers_run(result) -> list[str]:
    return [target for kind, target in result.steps if kind in COMPILERS]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def same_modules(a: Project, b: Project) -> bool:
    return all(sha256(a.root / m) == sha256(b.root / m) for m in MODULES)


def test_a_second_checkout_at_another_path_builds_nothing(tmp_path, server):
    writer = checkout(tmp_path / "ci" / "repo")
    assert len(compilers_run(build(writer, server.url))) >= 4
    assert server.requests("PUT")
    reader = checkout(tmp_path / "dev" / "somewhere" / "else" / "repo")
    result = build(reader, server.url)
    assert compilers_run(result) == []
    for path in MODULES:
        assert f"Retrieved `{path}' from cache" in result.output
    assert same_modules(writer, reader)
    assert "warning" not in result.output
    assert build(reader, server.url, "--question").returncode == 0


def test_codegen_entries_come_from_the_remote_cache(tmp_path, server):
    """A module the reader must assemble again takes every executable's codegen from the server."""
    build(checkout(tmp_path / "ci" / "repo"), server.url, "RELINK=no")
    reader = checkout(tmp_path / "dev" / "repo")
    kernel = reader.root / FILES[2]
    kernel.write_text(kernel.read_text() + "// a comment: a new file, the same executable\n")
    result = build(reader, server.url, "RELINK=no")          # linked: its ASSEMBLE takes them
    assert result.ran("ASSEMBLE") == ["build/llvm-cpu/mlp/module/mlp.mlir"]
    assert result.ran("CODEGEN") == []
    assert re.search(r"module/mlp.mlir: [1-9][0-9]* cached, 0 compiled", result.output), \
        result.output
    assert list((reader.root / "build/codegen-cache/llvm-cpu").glob("*.executable.mlir"))


def test_a_read_only_client_never_uploads(tmp_path, server):
    reader = checkout(tmp_path / "dev" / "repo")
    result = build(reader, server.url, "REMOTE_CACHE_READONLY=1")
    assert len(compilers_run(result)) >= 4
    assert server.requests("GET") and server.requests("PUT") == []
    assert server.blobs() == []
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, server.url)
    uploaded = len(server.requests("PUT"))
    again = checkout(tmp_path / "dev2" / "repo")
    assert compilers_run(build(again, server.url, "REMOTE_CACHE_READONLY=1")) == []
    assert len(server.requests("PUT")) == uploaded
    assert same_modules(writer, again)


@pytest.mark.parametrize("read_only", ["--cache-readonly", "CACHE_READONLY=1"])
def test_a_read_only_build_still_takes_what_the_remote_cache_has(tmp_path, server, read_only):
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, server.url)
    uploaded = len(server.requests("PUT"))
    reader = checkout(tmp_path / "dev" / "repo")
    result = build(reader, server.url, read_only)
    assert compilers_run(result) == []
    for path in MODULES:
        assert f"Retrieved `{path}' from cache" in result.output
    assert len(server.requests("PUT")) == uploaded
    assert same_modules(writer, reader)


def test_a_corrupted_blob_on_the_server_is_detected_and_rebuilt(tmp_path, server):
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, server.url)
    module = "build/llvm-cpu/mlp.vmfb"
    blob = server.data / "cas" / sha256(writer.root / module)
    blob.write_bytes(blob.read_bytes()[:-16] + b"\0" * 16)
    reader = checkout(tmp_path / "dev" / "repo")
    result = build(reader, server.url)
    assert result.made_modules() == [module]
    assert f"blob /cas/{blob.name} of {module} is corrupt" in result.output
    assert same_modules(writer, reader)
    assert sha256(blob) == blob.name                  # uploaded again, whole


def test_a_server_killed_mid_build_leaves_a_correct_build(tmp_path, server):
    reference = checkout(tmp_path / "plain" / "repo")
    reference.scons("EXECUTABLE_CACHE=llvm-cpu")
    reader = checkout(tmp_path / "dev" / "repo")
    argv = scons_argv(f"REMOTE_CACHE_URL={server.url}", *FAST)
    run = subprocess.Popen(argv, cwd=reader.root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
    deadline = time.monotonic() + 120
    while not server.requests("PUT") and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()
    output, _ = run.communicate(timeout=600)
    assert run.returncode == 0, output
    assert output.count(GAVE_UP) == 1, output
    assert compilers_run_text(output)                 # it went on building, locally
    assert same_modules(reference, reader)
    assert reader.scons("--question", f"REMOTE_CACHE_URL={server.url}", *FAST).returncode == 0


def compilers_run_text(output: str) -> list[str]:
    return [path for step, path in parse_steps(output) if step in COMPILERS]


def silent_server() -> tuple[socket.socket, str]:
    """A server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held = []
    threading.Thread(target=lambda: [held.append(listener.accept()) for _ in range(64)],
                     daemon=True).start()
    return listener, f"http://127.0.0.1:{listener.getsockname()[1]}"


def test_a_down_or_silent_server_warns_once_and_the_build_goes_on(tmp_path):
    listener, silent = silent_server()
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{closed.getsockname()[1]}"
    for n, (url, why) in enumerate([(down, "cannot connect"), (silent, "no answer in time")]):
        project = checkout(tmp_path / f"repo{n}")
        result = project.scons(f"REMOTE_CACHE_URL={url}", "REMOTE_CACHE_TIMEOUT=0.5",
                               "REMOTE_CACHE_RETRIES=1", "EXECUTABLE_CACHE=llvm-cpu")
        assert result.output.count(GAVE_UP) == 1, result.output
        assert f"scons: warning: remote cache {url}: {why}" in result.output
        assert len(compilers_run(result)) >= 4
    listener.close()


def test_credentials_come_from_netrc_and_are_never_shown(tmp_path, monkeypatch):
    password = "s3cret-Passw0rd-never-shown"
    with CacheServer(tmp_path / "server", "ci", password) as server:
        anonymous = build(checkout(tmp_path / "anon" / "repo"), server.url)
        assert f"remote cache {server.url}: HTTP 401 Unauthorized{GAVE_UP}" in anonymous.output
        assert server.blobs() == []
        netrc = tmp_path / "netrc"
        netrc.write_text(f"machine 127.0.0.1 login ci password {password}\n")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
        writer = checkout(tmp_path / "ci" / "repo")
        wrote = build(writer, server.url, "VERBOSE=1")
        assert server.blobs()
        reader = checkout(tmp_path / "dev" / "repo")
        read = build(reader, server.url, "VERBOSE=1")
        assert compilers_run(read) == [] and "warning" not in read.output
    for result in (anonymous, wrote, read):
        assert password not in result.output
    for project in (writer, reader):
        for path in project.root.rglob("*"):
            if path.is_file():
                assert password.encode() not in path.read_bytes(), path


def test_credentials_in_the_url_are_refused_in_one_line(tmp_path):
    result = checkout(tmp_path / "repo").scons("REMOTE_CACHE_URL=http://ci:pw@127.0.0.1:1/",
                                              expect_ok=False)
    assert "put credentials in a netrc file or IREE_KERNELS_REMOTE_CACHE_TOKEN" in result.output
    assert "pw@" not in result.output.replace("REMOTE_CACHE_URL=http://ci:pw@", "")
    assert "Traceback" not in result.output


def test_entries_are_authenticated_with_the_signing_key(tmp_path, server, monkeypatch):
    monkeypatch.setenv("IREE_KERNELS_CACHE_KEY", "the CI key, 16 bytes at least")
    writer = checkout(tmp_path / "ci" / "repo")
    build(writer, server.url)
    monkeypatch.setenv("IREE_KERNELS_CACHE_KEY", "another key, 16 bytes at least")
    stranger = build(checkout(tmp_path / "other" / "repo"), server.url, "REMOTE_CACHE_READONLY=1")
    assert "is not used: it is signed with another key" in stranger.output
    assert len(compilers_run(stranger)) >= 4
    monkeypatch.setenv("IREE_KERNELS_CACHE_KEY", "the CI key, 16 bytes at least")
    reader = checkout(tmp_path / "dev" / "repo")
    assert compilers_run(build(reader, server.url, "REMOTE_CACHE_READONLY=1")) == []
    assert same_modules(writer, reader)


@pytest.mark.parametrize("mode, declared, why", [
    ("slow-body", 300, "no answer in time"),
    ("slow-body", 2 ** 62, "is 4611686018427387904 bytes, over REMOTE_CACHE_MAX_MIB"),
    ("endless-chunked", 1000, "is larger than the 1000 bytes its action result says")])
def test_a_hostile_server_cannot_hold_or_exhaust_the_build(tmp_path, server, mode, declared, why):
    from cache_server import HostileServer
    build(checkout(tmp_path / "writer"), server.url)             # action results for every file
    with HostileServer(mode, declared=declared, delay=0.5, data=server.data) as hostile:
        project = checkout(tmp_path / "repo")
        start = time.monotonic()
        result = project.scons(f"REMOTE_CACHE_URL={hostile.url}", "REMOTE_CACHE_TIMEOUT=1",
                               "REMOTE_CACHE_RETRIES=0", "EXECUTABLE_CACHE=llvm-cpu")
        took = time.monotonic() - start
    assert why in result.output and "Traceback" not in result.output
    assert len(compilers_run(result)) >= 4
    assert took < 120, took


@pytest.mark.parametrize("token", ["t0ken-\nX-Evil: 1", "t0ken-ünïcode"])
def test_a_token_no_header_can_carry_is_one_line_that_never_shows_it(tmp_path, token):
    result = checkout(tmp_path / "repo").scons(
        "REMOTE_CACHE_URL=http://127.0.0.1:1/", expect_ok=False,
        env={"IREE_KERNELS_REMOTE_CACHE_TOKEN": token})
    assert "IREE_KERNELS_REMOTE_CACHE_TOKEN holds a character" in result.output, result.output
    assert "t0ken" not in result.output and "Traceback" not in result.output


def test_credentials_in_the_url_are_never_shown_not_even_by_help(tmp_path):
    project = checkout(tmp_path / "repo")
    url = "http://ci:hunter2-pw@127.0.0.1:1/"
    for args in (("-h",), ()):
        result = project.scons(*args, expect_ok=False,
                               env={"IREE_KERNELS_REMOTE_CACHE_URL": url})
        assert "hunter2" not in result.output and "Traceback" not in result.output, result.output
    assert "***@127.0.0.1:1" in result.output


def test_unbounded_retries_are_refused(tmp_path):
    result = checkout(tmp_path / "repo").scons("REMOTE_CACHE_URL=http://127.0.0.1:1/",
                                              "REMOTE_CACHE_RETRIES=1000000", expect_ok=False)
    assert "REMOTE_CACHE_RETRIES: from 0 to 10" in result.output and not result.ok
