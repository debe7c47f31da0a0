"""Where SCons's caches are: the shared build cache (CACHE_DIR) and the remote cache
(``iree_kernels.cache.remote_cache``), configured from their variables (``iree_kernels.settings``),
and where SCons's cache mirrors the remote one.

Both caches reach the server through their ``store.Store``: an entry not in
the local folder is fetched into it, then checked (content, signature)
exactly as one a local build wrote; an entry published locally is uploaded.
SCons's cache mirrors into a local CacheDir (CACHE_DIR, else
``$BUILD_DIR/remote-cache``); the codegen cache into its own folder.

Entries are named on the server by ``remote_protocol.action_key`` of the local
entry's name (SCons's build signature, the codegen key), which holds no path,
URL or secret, so checkouts anywhere share them.

The server this build uses is kept in the environment (``$IREE_REMOTE_CACHE``,
set by ``configure``, read by ``remote``), not in a module global.
"""
from __future__ import annotations

import os
import sys

import SCons.Script

from iree_kernels.cache import remote_cache
from iree_kernels.core.errors import UserError
from iree_kernels.scons.reporting import fail


def shared_cache(env) -> tuple[str | None, bool]:
    """The folder CACHE_DIR names (None: no shared cache), and whether this build only reads it."""
    folder = env.get("CACHE_DIR", "")
    if not folder or SCons.Script.GetOption("cache_disable"):
        return None, False
    path = os.path.join(SCons.Script.GetLaunchDir(), os.path.expanduser(folder))
    if "$" in path:
        fail(f"CACHE_DIR: the cache's path {path} contains '$', which SCons would expand; "
             "use a folder whose path has none")
    return path, only_reads(env)


def only_reads(env, variable: str = "CACHE_READONLY") -> bool:
    """Whether this build only reads a cache: ``variable`` (CACHE_READONLY,
    REMOTE_CACHE_READONLY) or SCons's --cache-readonly says so."""
    return bool(env[variable] or SCons.Script.GetOption("cache_readonly"))


MIRROR = "remote-cache"            # under BUILD_DIR, where no CACHE_DIR is given
REMOTE = "IREE_REMOTE_CACHE"       # the construction variable holding the configured server


def configure(env) -> remote_cache.RemoteCache | None:
    """The remote cache REMOTE_CACHE_URL names (None: none), kept in ``env`` for ``remote``;
    its token taken out of the tools' environment."""
    url = env.get("REMOTE_CACHE_URL", "")
    if not url or SCons.Script.GetOption("cache_disable"):
        os.environ.pop(remote_cache.TOKEN_VARIABLE, None)
        env[REMOTE] = None
        return None
    try:
        timeout, retries = float(env["REMOTE_CACHE_TIMEOUT"]), int(env["REMOTE_CACHE_RETRIES"])
        max_mib = int(env.get("REMOTE_CACHE_MAX_MIB", str(remote_cache.MAX_BLOB_MIB)))
    except ValueError:
        fail("REMOTE_CACHE_TIMEOUT, REMOTE_CACHE_RETRIES and REMOTE_CACHE_MAX_MIB take numbers "
             "(seconds, attempts, MiB)")
    read_only = only_reads(env, "REMOTE_CACHE_READONLY")
    try:
        cache = remote_cache.from_environment(url, read_only, timeout, retries, warn=_warn,
                                              max_blob_mib=max_mib)
    except UserError as e:
        fail(str(e))
    os.environ.pop(remote_cache.TOKEN_VARIABLE, None)
    env[REMOTE] = cache
    return cache


def remote(env) -> remote_cache.RemoteCache | None:
    """The remote cache ``configure`` found for ``env`` (None: none, or not configured)."""
    return env.get(REMOTE)


def mirror(env, path: str | None, readonly: bool) -> str:
    """The local CacheDir the remote cache's entries are copied into."""
    if path is None:
        return env.Dir(f"#{env['BUILD_DIR']}/{MIRROR}").abspath
    if readonly:
        fail("REMOTE_CACHE_URL copies entries into CACHE_DIR, which CACHE_READONLY keeps "
             "from being written: unset CACHE_DIR (entries then go to "
             f"{env['BUILD_DIR']}/{MIRROR}) or CACHE_READONLY")
    return path


def _warn(message: str) -> None:
    sys.stderr.write(f"scons: warning: {message}\n")
