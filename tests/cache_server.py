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
            self.process = subprocess.Popen(
                [NGINX, "-p", str(self.root), "-e", str(self.root / "error.log"), "-c", str(config)],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._wait_listening():
                return self
        raise RuntimeError(f"nginx did not start: {(self.root / 'error.log').read_text()}")

    def _wait_listening(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                return False
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
