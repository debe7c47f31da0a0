"""iree_kernels.cache.remote_cache and remote_protocol: Bazel's layout and ActionResult, credentials, and a real nginx as server."""
from __future__ import annotations

import base64
import socket
import threading

import pytest

from cache_server import NGINX, SKIP_REASON, CacheServer
from iree_kernels.cache import remote_cache, remote_protocol
from iree_kernels.core.errors import UserError
from iree_kernels.cache.remote_cache import RemoteCache

needs_nginx = pytest.mark.skipif(NGINX is None, reason=SKIP_REASON)
KEY = "ab" * 32


def bazel_action_result():
    """Bazel's ActionResult, OutputFile and Digest (remote_execution.proto v2), as far as entries use them."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    F = descriptor_pb2.FieldDescriptorProto
    proto = descriptor_pb2.FileDescriptorProto(name="re_test.proto", package="re_test")
    for name, fields in [("Digest", [("hash", 1, F.TYPE_STRING, None),
                                     ("size_bytes", 2, F.TYPE_INT64, None)]),
                         ("OutputFile", [("path", 1, F.TYPE_STRING, None),
                                         ("digest", 2, F.TYPE_MESSAGE, ".re_test.Digest"),
                                         ("is_executable", 4, F.TYPE_BOOL, None)]),
                         ("ActionResult", [("output_files", 2, F.TYPE_MESSAGE,
                                            ".re_test.OutputFile"),
                                           ("exit_code", 4, F.TYPE_INT32, None),
                                           ("stdout_raw", 5, F.TYPE_BYTES, None)])]:
        message = proto.message_type.add(name=name)
        for field_name, number, kind, type_name in fields:
            repeated = field_name == "output_files"
            message.field.add(name=field_name, number=number, type=kind, type_name=type_name,
                              label=F.LABEL_REPEATED if repeated else F.LABEL_OPTIONAL)
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("re_test.ActionResult"))


def test_action_result_is_bazels_protobuf():
    files = {"entry": ("0" * 64, 300), "entry.sha256": ("f" * 64, 0)}
    data = remote_protocol.encode_action_result(files)
    parsed = bazel_action_result().FromString(data)
    assert [(f.path, f.digest.hash, f.digest.size_bytes) for f in parsed.output_files] == [
        ("entry", "0" * 64, 300), ("entry.sha256", "f" * 64, 0)]
    assert remote_protocol.decode_action_result(data) == files
    written = bazel_action_result()(exit_code=0, stdout_raw=b"out")
    written.output_files.add(path="a", is_executable=True).digest.hash = "1" * 64
    written.output_files[0].digest.size_bytes = 5
    assert remote_protocol.decode_action_result(written.SerializeToString()) == {"a": ("1" * 64, 5)}


def test_an_action_result_with_other_fields_is_read_and_a_truncated_one_refused():
    data = remote_protocol.encode_action_result({"a": ("1" * 64, 5)})
    extra = b"\x20\x00" + b"\x2a\x03out"          # exit_code = 0, stdout_raw = "out"
    assert remote_protocol.decode_action_result(extra + data) == {"a": ("1" * 64, 5)}
    with pytest.raises(ValueError):
        remote_protocol.decode_action_result(data[:-3])


@pytest.mark.parametrize("digest", ["../../../etc/passwd".ljust(64, "0"), "%2e%2e%2f" * 7 + "0",
                                    "A" * 64, "0" * 63, "0" * 65])
def test_an_action_results_digest_must_be_a_sha256_before_it_names_a_url(digest):
    data = remote_protocol.encode_action_result({"e": (digest, 5)})
    with pytest.raises(ValueError, match="not a SHA-256"):
        remote_protocol.decode_action_result(data)


def test_a_fetch_never_requests_a_blob_named_by_a_malformed_digest(tmp_path):
    with CacheServer(tmp_path / "server") as server:
        cache, warnings = client(server.url)
        cache.store(KEY, {"e": b"entry"})
        (server.data / "ac" / KEY).write_bytes(remote_protocol.encode_action_result(
            {"e": ("../../../../etc/passwd".ljust(64, "/"), 5)}))
        assert cache.fetch(KEY, ["e"], "e") is None
        assert [r for r in server.requests("GET") if "/cas/" in r] == []
        assert warnings == [f"remote cache {server.url}: action result {KEY} for e is not one "
                            "this build reads (an output file's digest is not a SHA-256 (64 hex "
                            "digits)); not used"]


def test_a_token_in_the_urls_query_is_never_shown():
    assert remote_cache.redact("https://cache.example/x?token=hunter2#frag") == \
        "https://cache.example/x?***#***"
    with pytest.raises(UserError) as e:
        RemoteCache("https://cache.example/x?token=hunter2")
    assert "hunter2" not in str(e.value)


def test_action_keys_are_sha256_names_that_differ_by_namespace():
    a, b = remote_protocol.action_key("scons", "x"), remote_protocol.action_key("codegen cuda", "x")
    assert a != b and len(a) == 64 and int(a, 16) >= 0


def test_credentials_from_the_token_or_the_netrc_entry_of_the_host(tmp_path):
    url = "https://cache.example:8443/iree"
    assert remote_cache.authorization(url, {"IREE_KERNELS_REMOTE_CACHE_TOKEN": "t0k\n"}) == \
        "Bearer t0k"
    netrc = tmp_path / "netrc"
    netrc.write_text("machine other login x password y\n"
                     "machine cache.example login ci password pa55\n")
    netrc.chmod(0o600)
    expected = "Basic " + base64.b64encode(b"ci:pa55").decode()
    assert remote_cache.authorization(url, {"NETRC": str(netrc)}) == expected
    assert remote_cache.authorization("http://nowhere/", {"NETRC": str(netrc)}) is None
    assert remote_cache.authorization(url, {"NETRC": str(tmp_path / "absent")}) is None


def test_a_bad_netrc_is_one_line_that_never_quotes_it(tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine cache.example login ci password\nsecret-word oops\n")
    with pytest.raises(UserError) as e:
        remote_cache.authorization("http://cache.example/", {"NETRC": str(netrc)})
    assert "not a netrc file" in str(e.value) and "secret-word" not in str(e.value)


def test_credentials_are_never_in_the_url_or_a_repr():
    with pytest.raises(UserError, match="not in the URL"):
        RemoteCache("http://ci:pw@cache.example/")
    with pytest.raises(UserError, match="not an http"):
        RemoteCache("ftp://cache.example/")
    cache = remote_cache.from_environment("http://cache.example/",
                                          environ={"IREE_KERNELS_REMOTE_CACHE_TOKEN": "hidden"})
    assert cache.authorization == "Bearer hidden" and "hidden" not in repr(cache)


@pytest.fixture
def server(tmp_path):
    with CacheServer(tmp_path / "server") as running:
        yield running


def client(url: str, **options) -> tuple[RemoteCache, list[str]]:
    warnings: list[str] = []
    return RemoteCache(url, timeout=2, retries=1, warn=warnings.append, **options), warnings


@needs_nginx
def test_stored_files_come_back_from_the_bazel_layout(server):
    cache, warnings = client(server.url + "/prefix/")
    assert cache.fetch(KEY, ["e"], "e") is None
    cache.store(KEY, {"e": b"entry", "e.sha256": b"record"})
    assert cache.fetch(KEY, ["e", "e.sha256"], "e") == {"e": b"entry", "e.sha256": b"record"}
    assert (server.data / "prefix/ac" / KEY).is_file()
    assert sorted(p.name for p in (server.data / "prefix/cas").iterdir()) == sorted(
        remote_cache.hashlib.sha256(d).hexdigest() for d in (b"entry", b"record"))
    assert cache.fetch(KEY, ["e", "other"], "e") is None          # not what the entry holds
    assert (cache.taken, cache.stored, warnings) == (1, 1, [])


@needs_nginx
def test_a_corrupted_blob_is_a_miss_with_a_warning(server):
    cache, warnings = client(server.url)
    cache.store(KEY, {"e": b"entry"})
    blob = next((server.data / "cas").iterdir())
    blob.write_bytes(b"entrY")
    assert cache.fetch(KEY, ["e"], "build/x.vmfb") is None
    assert warnings == [f"remote cache {server.url}: blob /cas/{blob.name} of build/x.vmfb is "
                        f"corrupt (its SHA-256 is {remote_cache.hashlib.sha256(b'entrY').hexdigest()[:12]}"
                        "...); not used"]
    cache.store(KEY, {"e": b"entry"})                               # a rebuild uploads it again
    assert cache.fetch(KEY, ["e"], "build/x.vmfb") == {"e": b"entry"}


@needs_nginx
def test_a_read_only_client_sends_no_put(server):
    cache, _ = client(server.url, read_only=True)
    cache.store(KEY, {"e": b"entry"})
    assert server.requests("PUT") == [] and server.blobs() == []


@needs_nginx
def test_a_killed_server_is_reported_once_and_not_asked_again(server):
    cache, warnings = client(server.url)
    cache.store(KEY, {"e": b"entry"})
    server.kill()
    for _ in range(3):
        assert cache.fetch(KEY, ["e"], "e") is None
        cache.store(KEY, {"e": b"entry"})
    assert warnings == [f"remote cache {server.url}: cannot connect (Connection refused); "
                        "building without it"]
    assert not cache.available


@needs_nginx
def test_refused_credentials_are_reported_once(tmp_path):
    with CacheServer(tmp_path / "server", "ci", "pw") as server:
        cache, warnings = client(server.url)
        assert cache.fetch(KEY, ["e"], "e") is None
        cache.store(KEY, {"e": b"entry"})
        assert warnings == [f"remote cache {server.url}: HTTP 401 Unauthorized; building without it"]
        assert server.requests("PUT") == []
        authorized, warnings = client(server.url)
        authorized.authorization = "Basic " + base64.b64encode(b"ci:pw").decode()
        authorized.store(KEY, {"e": b"entry"})
        assert authorized.fetch(KEY, ["e"], "e") == {"e": b"entry"} and warnings == []


@needs_nginx
def test_a_server_refusing_uploads_is_reported_once_and_still_read(tmp_path):
    with CacheServer(tmp_path / "server", uploads=False) as server:
        (server.data / "cas").mkdir(parents=True)
        (server.data / "ac").mkdir()
        (server.data / "cas" / remote_cache.hashlib.sha256(b"entry").hexdigest()).write_bytes(b"entry")
        (server.data / "ac" / KEY).write_bytes(remote_protocol.encode_action_result(
            {"e": (remote_cache.hashlib.sha256(b"entry").hexdigest(), 5)}))
        cache, warnings = client(server.url)
        cache.store("cd" * 32, {"e": b"other"})
        cache.store("cd" * 32, {"e": b"other"})
        assert cache.fetch(KEY, ["e"], "e") == {"e": b"entry"}
        assert warnings == [f"remote cache {server.url} refuses uploads (HTTP 405 Not Allowed); "
                            "only reading from it"]
        assert len(server.requests("PUT")) == 1


def test_a_server_that_never_answers_times_out_once():
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held = []
    threading.Thread(target=lambda: [held.append(listener.accept()) for _ in range(8)],
                     daemon=True).start()
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    warnings: list[str] = []
    cache = RemoteCache(url, timeout=0.2, retries=1, warn=warnings.append)
    assert cache.fetch(KEY, ["e"], "e") is None
    assert cache.fetch(KEY, ["e"], "e") is None
    assert warnings == [f"remote cache {url}: no answer in time; building without it"]
    assert len(held) == 2                      # one attempt and one retry, then never again
    listener.close()


def hostile_fetch(mode: str, timeout: float = 1.0, **server_options):
    """What fetching from a HostileServer in ``mode`` gives, how long it took, and the warnings."""
    import time
    from cache_server import HostileServer
    with HostileServer(mode, **server_options) as server:
        warnings: list[str] = []
        cache = RemoteCache(server.url, timeout=timeout, retries=0, warn=warnings.append,
                            max_blob=1 << 20)
        start = time.monotonic()
        found = cache.fetch(KEY, ["e"], "build/x.vmfb")
        return found, time.monotonic() - start, warnings, cache, server


def test_a_well_behaved_hostile_server_serves():
    found, _, warnings, _, _ = hostile_fetch("good")
    assert found == {"e": b"entry"} and warnings == []


@pytest.mark.parametrize("mode", ["slow-body", "slow-headers"])
def test_a_server_sending_a_byte_a_second_is_cut_at_the_deadline(mode):
    found, took, warnings, cache, _ = hostile_fetch(mode, timeout=1.0, delay=0.3,
                                                    blob=b"e" * 200)
    assert found is None and took < 3
    assert warnings == [f"remote cache {cache.url}: no answer in time; building without it"]


def test_a_blob_declared_huge_is_never_requested():
    found, took, warnings, cache, server = hostile_fetch("slow-body", declared=2 ** 62)
    assert found is None and took < 1 and server.requests == 1          # the action result only
    assert warnings == [f"remote cache {cache.url}: blob /cas/{server.digest} of build/x.vmfb "
                        f"is {2 ** 62} bytes, over REMOTE_CACHE_MAX_MIB (1 MiB); not used"]
    assert cache.available


@pytest.mark.parametrize("mode", ["endless-chunked", "huge"])
def test_an_answer_longer_than_declared_is_cut_and_not_used(mode):
    found, took, warnings, cache, server = hostile_fetch(mode, timeout=5, declared=1000)
    assert found is None and took < 5
    assert warnings == [f"remote cache {cache.url}: blob /cas/{server.digest} of build/x.vmfb "
                        "is larger than the 1000 bytes its action result says; not used"]
    assert cache.available


def test_retries_and_timeouts_are_bounded():
    for timeout, retries, match in [(10, 11, "REMOTE_CACHE_RETRIES: from 0 to 10"),
                                    (10, -1, "REMOTE_CACHE_RETRIES"),
                                    (float("inf"), 2, "REMOTE_CACHE_TIMEOUT"),
                                    (float("nan"), 2, "REMOTE_CACHE_TIMEOUT"),
                                    (0, 2, "REMOTE_CACHE_TIMEOUT")]:
        with pytest.raises(UserError, match=match):
            remote_cache.from_environment("http://cache.example/", timeout=timeout,
                                          retries=retries, environ={})
    with pytest.raises(UserError, match="REMOTE_CACHE_MAX_MIB"):
        remote_cache.from_environment("http://cache.example/", max_blob_mib=0, environ={})


@pytest.mark.parametrize("token", ["secret\nX-Injected: 1", "sécret-ü", "sec\x00ret", "a\u2028b"])
def test_a_token_no_header_can_carry_is_refused_without_showing_it(token):
    with pytest.raises(UserError) as e:
        remote_cache.authorization("http://cache.example/", {remote_cache.TOKEN_VARIABLE: token})
    assert remote_cache.TOKEN_VARIABLE in str(e.value) and "sec" not in str(e.value)


def test_a_netrc_password_no_header_can_carry_is_refused_without_showing_it(tmp_path):
    netrc = tmp_path / "netrc"
    netrc.write_text("machine cache.example login ci password pässwort\n")
    netrc.chmod(0o600)
    with pytest.raises(UserError) as e:
        remote_cache.authorization("http://cache.example/", {"NETRC": str(netrc)})
    assert "pässwort" not in str(e.value) and str(netrc) in str(e.value)


@pytest.mark.parametrize("url", ["http://ci:hunter2@cache.example/x", "http://:hunter2@cache.example/",
                                 "ftp://ci:hunter2@cache.example/", "http://ci:hunter2@cache.example:bad/"])
def test_a_url_with_credentials_is_refused_without_showing_them(url):
    with pytest.raises(UserError) as e:
        RemoteCache(url)
    assert "hunter2" not in str(e.value) and "***@cache.example" in str(e.value)
    assert remote_cache.redact(url).count("hunter2") == 0


def test_an_empty_blob_answered_endlessly_is_cut_at_once():
    found, took, warnings, cache, server = hostile_fetch("endless-chunked", timeout=5, declared=0)
    assert found is None and took < 5
    assert warnings == [f"remote cache {cache.url}: blob /cas/{server.digest} of build/x.vmfb "
                        "is larger than the 0 bytes its action result says; not used"]
