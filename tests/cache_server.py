"""A real HTTP remote cache for tests and benches: nginx with WebDAV PUT, on 127.0.0.1, in a folder.

nginx serves ``<folder>/data`` (``/cas/<sha256>``, ``/ac/<key>`` as Bazel's HTTP
cache lays them out), accepts PUT (ngx_http_dav_module, compiled into
Debian's nginx), logs every request to ``<folder>/access.log``, and, with a
user and password, answers only requests with HTTP basic auth; without
uploads, PUT is refused (HTTP 405), as a read-only endpoint does. It runs in the
foreground, one process (no master), so ``kill()`` stops all of it at once.
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

NGINX = shutil.which("nginx") or next(
    (p for p in ("/usr/sbin/nginx", "/sbin/nginx") if Path(p).exists()), None)
SKIP_REASON = "no nginx (./setup.sh installs it from debian-packages.txt)"
CONFIG = """
worker_processes 1;
daemon off;
master_process off;
pid {root}/nginx.pid;
error_log {root}/error.log warn;
events {{ worker_connections 256; }}
http {{
  access_log {root}/access.log;
  client_body_temp_path {root}/tmp/body;
  proxy_temp_path {root}/tmp/proxy;
  fastcgi_temp_path {root}/tmp/fastcgi;
  uwsgi_temp_path {root}/tmp/uwsgi;
  scgi_temp_path {root}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port};
    root {root}/data;
    client_max_body_size 0;
    location / {{
      {dav}
      {auth}
    }}
  }}
}}
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CacheServer:
    """nginx serving a remote cache from ``root``; ``url`` once started."""

    def __init__(self, root: Path, user: str | None = None, password: str | None = None,
                 uploads: bool = True) -> None:
        self.root, self.user, self.password, self.uploads = root, user, password, uploads
        self.data = root / "data"
        self.process: subprocess.Popen | None = None
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> "CacheServer":
        for folder in (self.data, self.root / "tmp"):
            folder.mkdir(parents=True, exist_ok=True)
        auth = ""
        if self.user:
            (self.root / "htpasswd").write_text(f"{self.user}:{{PLAIN}}{self.password}\n")
            auth = f'auth_basic "cache"; auth_basic_user_file {self.root}/htpasswd;'
        for _ in range(5):                       # another process may take the port meanwhile
            self.port = _free_port()
            config = self.root / "nginx.conf"
            dav = "dav_methods PUT; create_full_put_path on;" if self.uploads else ""
            config.write_text(CONFIG.format(root=self.root, port=self.port, auth=auth, dav=dav))
            (self.root / "nginx.pid").unlink(missing_ok=True)     # the last try's
            self.process = subprocess.Popen(
                [NGINX, "-p", str(self.root), "-e", str(self.root / "error.log"), "-c", str(config)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_listening():
                return self
        raise RuntimeError(f"nginx did not start: {(self.root / 'error.log').read_text()}")

    def _wait_listening(self) -> bool:
        """Our nginx took the port: it wrote its pid file (after binding) and answers there.

        Another worker's server may take the same free port between ``_free_port`` and
        nginx's bind; then a connection alone would reach that server, not ours.
        """
        deadline = time.monotonic() + 10
        pid_file = self.root / "nginx.pid"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
            written = pid_file.read_text().strip() if pid_file.exists() else ""
            if written != str(self.process.pid):
                time.sleep(0.02)
                continue
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return True
            except OSError:
                time.sleep(0.02)
        self.kill()
        return False

    def kill(self) -> None:
        """Stop the server at once, as a crash would."""
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def requests(self, method: str | None = None) -> list[str]:
        """The request lines logged ("PUT /cas/... HTTP/1.1"), of one method or all."""
        log = self.root / "access.log"
        lines = log.read_text().splitlines() if log.exists() else []
        found = [line.split('"')[1] for line in lines if line.count('"') >= 2]
        return [r for r in found if method is None or r.startswith(method + " ")]

    def blobs(self) -> list[Path]:
        folder = self.data / "cas"
        return sorted(folder.iterdir()) if folder.exists() else []

    def __enter__(self) -> "CacheServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.kill()


class HostileServer:
    """A remote cache that misbehaves on purpose, on 127.0.0.1, in a thread.

    ``/ac/<key>`` answers an action result naming one blob, file ``e``, of
    ``declared`` bytes (the blob's name is the SHA-256 of ``blob``); ``/cas/``
    answers as ``mode`` says:

    - ``slow-body``: the headers at once, then the declared body a byte every
      ``delay`` seconds;
    - ``slow-headers``: the status line and headers a byte every ``delay`` seconds;
    - ``endless-chunked``: chunked encoding, chunks of 64 KiB forever;
    - ``huge``: a Content-Length of 2**40 bytes, whatever was declared (the body sent as
      fast as read);
    - ``good``: the blob, as a server should.

    With ``data`` (a CacheServer's folder a build filled), ``/ac/`` answers the
    action results there instead (404 where there is none), every blob's size
    made ``declared`` where that is given.

    ``requests`` counts the requests it was sent.
    """

    def __init__(self, mode: str, blob: bytes = b"entry", declared: int | None = None,
                 delay: float = 1.0, data: Path | None = None) -> None:
        import hashlib
        import threading
        from iree_kernels.cache import remote_protocol
        self.mode, self.blob, self.delay, self.data = mode, blob, delay, data
        self.given_size = declared
        self.declared = len(blob) if declared is None else declared
        self.digest = hashlib.sha256(blob).hexdigest()
        self.action_result = remote_protocol.encode_action_result({"e": (self.digest, self.declared)})
        self.requests = 0
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def _serve(self) -> None:
        import threading
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.requests += 1
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        try:
            request = b""
            while b"\r\n\r\n" not in request:
                data = connection.recv(65536)
                if not data:
                    return
                request += data
            path = request.split(b" ")[1].decode()
            if "/ac/" in path:
                result = self.action_result
                if self.data is not None:
                    from iree_kernels.cache import remote_protocol
                    stored = self.data / "ac" / path.rpartition("/")[2]
                    if not stored.is_file():
                        connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                        return
                    files = remote_protocol.decode_action_result(stored.read_bytes())
                    result = remote_protocol.encode_action_result(
                        {name: (digest, self.given_size if self.given_size is not None else size)
                         for name, (digest, size) in files.items()})
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                                   % len(result) + result)
                return
            if self.mode == "good":
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n"
                                   % len(self.blob) + self.blob)
            elif self.mode == "slow-body":
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % self.declared)
                for _ in range(self.declared):
                    if self._stop.wait(self.delay):
                        return
                    connection.sendall(b"x")
            elif self.mode == "slow-headers":
                for byte in b"HTTP/1.1 200 OK\r\nX-Slow: " + b"y" * 10000:
                    if self._stop.wait(self.delay):
                        return
                    connection.sendall(bytes([byte]))
            elif self.mode == "endless-chunked":
                connection.sendall(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                chunk = b"10000\r\n" + b"z" * 0x10000 + b"\r\n"
                while not self._stop.is_set():
                    connection.sendall(chunk)
            elif self.mode == "huge":
                connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % 2 ** 40)
                chunk = b"z" * 0x10000
                while not self._stop.is_set():
                    connection.sendall(chunk)
        except OSError:
            pass
        finally:
            connection.close()

    def start(self) -> "HostileServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._listener.close()

    def __enter__(self) -> "HostileServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
