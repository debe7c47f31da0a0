"""A client of an HTTP remote cache in Bazel's layout, shared by SCons's cache and the codegen cache.

The server is any Bazel HTTP remote cache (bazel-remote, nginx with WebDAV PUT,
a bucket behind a proxy): blobs are ``GET``/``PUT`` at ``<url>/cas/<sha256>``,
named by the SHA-256 of their content, and action results at
``<url>/ac/<key>``, each a Bazel ``ActionResult`` protobuf naming its output
files by path and blob digest. An entry of either cache is one action result
whose output files are the entry's files and its digest record
(``integrity``), so a signed entry stays signed on the server and is checked
by the same code as a local one once ``store.Store.fetch`` copied it in.

Every blob is checked on download: a blob whose SHA-256 is not its name is
not used (one warning naming it) and the entry is a miss; so is one whose
declared size is over ``max_blob`` (never requested) or whose answer is
longer than declared (cut off there): nothing a server sends is held in
memory beyond those sizes. A server that
cannot be reached, answers too slowly (a deadline of ``timeout`` seconds
per request, enforced on every read, ``retries`` more attempts) or refuses the credentials is reported once and
not asked again during the build: the build goes on locally. A server that
refuses uploads (a read-only endpoint) is reported once and only read from.

Credentials come from ``IREE_KERNELS_REMOTE_CACHE_TOKEN`` (a bearer token) or
the netrc file (``$NETRC``, else ``~/.netrc``) entry for the server's host, and
are sent in an ``Authorization`` header only: never in the URL (refused
there), a message, a repr, a cache key or a log. Redirects are not followed,
so the header never goes to another server.

Not for: the names and records of Bazel's layout (``remote_protocol``);
deciding whether an entry may be trusted (``store``, after the files are
copied into a local cache), or where local entries live (the caches); which
server this build uses (the glue, ``iree_kernels.scons.caches``).
"""
from __future__ import annotations

import base64
import hashlib
import math
import os
import sys
import threading
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterable, Mapping

from iree_kernels.cache.remote_protocol import decode_action_result, encode_action_result
from iree_kernels.core.errors import UserError

# http.client, ssl, socket and netrc are imported where a server is talked to: every scons run
# imports this module (its settings), and http.client with email's modules costs 20 ms.
if TYPE_CHECKING:
    import socket

URL_VARIABLE = "IREE_KERNELS_REMOTE_CACHE_URL"
TOKEN_VARIABLE = "IREE_KERNELS_REMOTE_CACHE_TOKEN"
NETRC_VARIABLE = "NETRC"
CHUNK = 1 << 16
MIN_RATE = 1 << 20          # bytes a second a transfer may not fall below, on top of the timeout
MAX_ACTION_RESULT = 1 << 20 # an action result names a few files: more is not one
MAX_RETRIES = 10            # REMOTE_CACHE_RETRIES above this is refused
MAX_BLOB_MIB = 512          # REMOTE_CACHE_MAX_MIB's default: blobs are held in memory
_RETRIED = {408, 429, 500, 502, 503, 504}


class Unavailable(Exception):
    """The server cannot be used for the rest of the build: one line, naming no secret."""


class UploadRefused(Exception):
    """The server answers reads but refuses writes (a read-only endpoint, missing rights)."""


class TooLarge(Exception):
    """An answer larger than it may be (declared or sent): that entry is a miss, the server still used."""


def authorization(url: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """The Authorization header for ``url``: the token, or the netrc entry of its host; None: none."""
    token = environ.get(TOKEN_VARIABLE, "").strip()
    if token:
        return f"Bearer {_header_safe(token, TOKEN_VARIABLE)}"
    path = environ.get(NETRC_VARIABLE) or os.path.expanduser("~/.netrc")
    if not os.path.isfile(path):
        return None
    import netrc

    try:
        found = netrc.netrc(path).authenticators(urllib.parse.urlsplit(url).hostname or "")
    except netrc.NetrcParseError as e:     # its message may quote a password: only the line
        raise UserError(f"{path}, line {e.lineno}: not a netrc file Python can read") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read it: {e.strerror}") from None
    if not found:
        return None
    login, _, password = found
    _header_safe(f"{login}:{password or ''}", f"{path}'s entry for the server's host")
    return "Basic " + base64.b64encode(f"{login}:{password or ''}".encode("utf-8")).decode("ascii")


def _header_safe(secret: str, what: str) -> str:
    """``secret`` if an HTTP header can carry it; else UserError naming ``what``, never the secret."""
    if any(not 0x21 <= ord(c) <= 0x7E for c in secret.replace(" ", "!")):
        raise UserError(f"{what} holds a character an HTTP header cannot carry (a control "
                        "character, a newline or a non-ASCII letter); the value is not shown")
    return secret


def redact(url: str) -> str:
    """``url`` without the secrets it may hold: ``user:password@`` becomes ``***@``, a query
    (``?token=...``) and a fragment ``?***`` and ``#***``."""
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError:
        return "(a URL that cannot be parsed)"
    if "@" in parts.netloc:
        parts = parts._replace(netloc="***@" + parts.netloc.rpartition("@")[2])
    return urllib.parse.urlunsplit(parts._replace(query="***" if parts.query else "",
                                                  fragment="***" if parts.fragment else ""))


def _stderr_warning(message: str) -> None:
    sys.stderr.write(f"warning: {message}\n")


@dataclass(eq=False)
class RemoteCache:
    """One server, what this build may do with it, and whether it is still worth asking."""
    url: str
    read_only: bool = False
    timeout: float = 10.0          # seconds a request may take (plus a second per MiB)
    retries: int = 2               # more attempts after a failure that may pass
    max_blob: int = MAX_BLOB_MIB << 20   # bytes a blob may have: larger ones are never read
    authorization: str | None = field(default=None, repr=False)
    warn: Callable[[str], None] = field(default=_stderr_warning, repr=False)
    taken: int = field(default=0, init=False)
    stored: int = field(default=0, init=False)
    corrupt: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        shown = redact(self.url)
        try:
            parts = urllib.parse.urlsplit(self.url)
            parts.port
        except ValueError:
            raise UserError(f"REMOTE_CACHE_URL: '{shown}' is not a URL") from None
        if "@" in parts.netloc:
            raise UserError(f"REMOTE_CACHE_URL: '{shown}': put credentials in a netrc file or "
                            f"{TOKEN_VARIABLE}, not in the URL, which builds print")
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UserError(f"REMOTE_CACHE_URL: '{shown}' is not an http:// or https:// URL")
        if parts.query or parts.fragment:
            raise UserError(f"REMOTE_CACHE_URL: '{shown}' has a query or fragment")
        if any(not 0x21 <= ord(c) <= 0x7E for c in self.url):
            raise UserError(f"REMOTE_CACHE_URL: '{shown}' holds a space, a control character "
                            "or a non-ASCII letter (percent-encode it)")
        self._parts = parts
        self._prefix = parts.path.rstrip("/")
        self._lock = threading.Lock()
        self._down = False
        self._no_uploads = False

    @property
    def available(self) -> bool:
        return not self._down

    def fetch(self, key: str, names: Iterable[str], what: str) -> dict[str, bytes] | None:
        """The files ``names`` of the action result ``key``, each checked against its name; None: a miss."""
        if self._down:
            return None
        try:
            try:
                result = self._request("GET", f"/ac/{key}", limit=MAX_ACTION_RESULT)
            except TooLarge:
                self._say(f"remote cache {self.url}: action result {key} for {what} is over "
                          f"{MAX_ACTION_RESULT >> 20} MiB, which no action result is; not used")
                return None
            if result is None:
                return None
            try:
                outputs = decode_action_result(result)
            except ValueError as e:
                self._say(f"remote cache {self.url}: action result {key} for {what} is not one "
                          f"this build reads ({e}); not used")
                return None
            if any(name not in outputs for name in names):
                return None
            files = {}
            for name in names:
                digest, size = outputs[name]
                if size > self.max_blob:
                    self._say(f"remote cache {self.url}: blob /cas/{digest[:64]} of {what} is "
                              f"{size} bytes, over REMOTE_CACHE_MAX_MIB "
                              f"({self.max_blob >> 20} MiB); not used")
                    return None
                try:
                    blob = self._request("GET", f"/cas/{digest}", size, limit=size)
                except TooLarge:
                    with self._lock:
                        self.corrupt += 1
                    self._say(f"remote cache {self.url}: blob /cas/{digest[:64]} of {what} is "
                              f"larger than the {size} bytes its action result says; not used")
                    return None
                if blob is None:
                    return None
                found = hashlib.sha256(blob).hexdigest()
                if found != digest:
                    with self._lock:
                        self.corrupt += 1
                    self._say(f"remote cache {self.url}: blob /cas/{digest} of {what} is "
                              f"corrupt (its SHA-256 is {found[:12]}...); not used")
                    return None
                files[name] = blob
        except Unavailable as e:
            self._give_up(str(e))
            return None
        with self._lock:
            self.taken += 1
        return files

    def store(self, key: str, files: Mapping[str, bytes]) -> None:
        """Upload ``files`` (name -> content) as the action result ``key``: blobs first, then the result."""
        if self.read_only or self._down or self._no_uploads:
            return
        if any(len(data) > self.max_blob for data in files.values()):
            return                     # no reader would take it
        try:
            outputs = {}
            for name, data in files.items():
                digest = hashlib.sha256(data).hexdigest()
                self._request("PUT", f"/cas/{digest}", len(data), data)
                outputs[name] = (digest, len(data))
            self._request("PUT", f"/ac/{key}", body=encode_action_result(outputs))
        except Unavailable as e:
            self._give_up(str(e))
            return
        except UploadRefused as e:
            with self._lock:
                first, self._no_uploads = not self._no_uploads, True
            if first:
                self._say(f"remote cache {self.url} refuses uploads ({e}); only reading from it")
            return
        with self._lock:
            self.stored += 1

    def _give_up(self, why: str) -> None:
        with self._lock:
            first, self._down = not self._down, True
        if first:
            self._say(f"remote cache {self.url}: {why}; building without it")

    def _say(self, message: str) -> None:
        self.warn(message)

    def _request(self, method: str, path: str, size: int = 0, body: bytes | None = None,
                 limit: int = MAX_ACTION_RESULT) -> bytes | None:
        """The response body (None: 404); Unavailable once the retries are spent or access is refused.

        ``limit``: the most bytes the body may have, 0 included (TooLarge beyond it, not retried).
        """
        import http.client

        why = ""
        for attempt in range(self.retries + 1):
            if self._down:
                raise Unavailable("given up earlier")
            if attempt:
                time.sleep(min(0.1 * 2 ** (attempt - 1), 1.0))
            try:
                status, reason, data = self._once(method, path, size, body, limit)
            except (OSError, http.client.HTTPException, TimeoutError) as e:
                why = _describe(e)
                continue
            if status in (200, 201, 204):
                return data
            if status == 404 and method == "GET":
                return None
            why = f"HTTP {status} {reason}".strip()
            if status in _RETRIED:
                continue
            if method == "PUT":         # reads may still be allowed (anonymous readers)
                raise UploadRefused(why)
            raise Unavailable(why)
        raise Unavailable(why)

    def _once(self, method: str, path: str, size: int, body: bytes | None,
              limit: int) -> tuple[int, str, bytes]:
        """One request, over by ``timeout`` seconds plus one per MiB of ``size`` whatever the server does."""
        import http.client
        import ssl

        parts = self._parts
        deadline = time.monotonic() + self.timeout + size / MIN_RATE
        if parts.scheme == "https":
            connection = http.client.HTTPSConnection(parts.hostname, parts.port,
                                                     timeout=self.timeout,
                                                     context=ssl.create_default_context())
        else:
            connection = http.client.HTTPConnection(parts.hostname, parts.port,
                                                    timeout=self.timeout)
        headers = {"Connection": "close"}
        if self.authorization:
            headers["Authorization"] = self.authorization
        if body is not None:
            headers["Content-Length"] = str(len(body))
        # A server may send its headers or body a byte at a time: each socket operation
        # waits at most what is left, and a watchdog cuts the connection at the deadline
        # (a read of headers is several socket reads).
        watchdog = _Watchdog()
        try:
            connection.connect()
            sock = connection.sock     # http.client lets go of it once the answer comes
            watchdog.start(sock, deadline)
            connection.request(method, self._prefix + path, body=body, headers=headers)
            response = connection.getresponse()
            if response.status != 200 or method != "GET":
                return response.status, response.reason, b""     # only the status is used
            declared = response.getheader("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise TooLarge()
            chunks, received = [], 0
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or watchdog.fired:
                    raise TimeoutError("the transfer is too slow")
                sock.settimeout(left)
                chunk = response.read1(CHUNK)
                if not chunk:
                    break
                received += len(chunk)
                if received > limit:
                    raise TooLarge()
                chunks.append(chunk)
            if watchdog.fired:
                raise TimeoutError("the transfer is too slow")
            if response.length:        # the connection ended before the declared body did
                raise http.client.IncompleteRead(b"", response.length)
            return response.status, response.reason, b"".join(chunks)
        except (OSError, http.client.HTTPException):
            if watchdog.fired:         # what the cut connection made of it
                raise TimeoutError("the deadline passed") from None
            raise
        finally:
            watchdog.cancel()
            connection.close()


class _Watchdog:
    """Shuts a connection's socket down at a deadline, ending whatever waits on it."""

    def __init__(self) -> None:
        self._timer: threading.Timer | None = None
        self.fired = False

    def start(self, sock: socket.socket, deadline: float) -> None:
        self._timer = threading.Timer(max(deadline - time.monotonic(), 0), self._fire, (sock,))
        self._timer.daemon = True
        self._timer.start()

    def _fire(self, sock: socket.socket) -> None:
        import socket

        self.fired = True
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass                        # closed meanwhile

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


def _describe(error: Exception) -> str:
    import http.client
    import ssl

    if isinstance(error, http.client.IncompleteRead):
        return "the server closed the connection mid-answer"
    if isinstance(error, TimeoutError) or "timed out" in str(error):
        return "no answer in time"
    if isinstance(error, ssl.SSLError):
        return f"TLS failed ({error.reason or error})"
    if isinstance(error, OSError) and error.strerror:
        return f"cannot connect ({error.strerror})"
    return f"the connection failed ({type(error).__name__})"


def from_environment(url: str, read_only: bool = False, timeout: float = 10.0, retries: int = 2,
                     environ: Mapping[str, str] = os.environ,
                     warn: Callable[[str], None] = _stderr_warning,
                     max_blob_mib: int = MAX_BLOB_MIB) -> RemoteCache:
    """The cache at ``url`` with the credentials the environment or netrc file gives; UserError if unusable."""
    if not (math.isfinite(timeout) and 0 < timeout <= 3600):
        raise UserError("REMOTE_CACHE_TIMEOUT: seconds above 0 and at most 3600")
    if not 0 <= retries <= MAX_RETRIES:
        raise UserError(f"REMOTE_CACHE_RETRIES: from 0 to {MAX_RETRIES} more attempts")
    if not 1 <= max_blob_mib <= 1 << 20:
        raise UserError("REMOTE_CACHE_MAX_MIB: MiB from 1 to 1048576")
    cache = RemoteCache(url, read_only, timeout, retries, max_blob_mib << 20, warn=warn)
    cache.authorization = authorization(url, environ)
    return cache


_configured: RemoteCache | None = None
