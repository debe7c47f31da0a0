"""When SCons may take a file's content signature from .sconsign instead of hashing the file.

SCons trusts the signature .sconsign keeps for a file where the file's time is
the one it was taken at and the file is older than ``--max-drift`` seconds (by
default two days). A model's intermediates weigh what its weights do, and
hashing them again was most of a no-op, so the project trusts files older than
one second. SCons compares times in whole seconds (``getmtime`` returns
``ST_MTIME``); with a drift of one second, a file changed within the second
its signature was taken keeps the old signature once that second is over, and
the change is missed (tests/e2e/test_robustness.py). So the times compared are
the file system's own, to the nanosecond it keeps: a change moves them.

The files a build does hash (each big file it writes, once) are hashed with
SHA-256 rather than SCons's default MD5: hashlib's SHA-256 runs on the CPU's
SHA extensions, 1.3 GB/s against MD5's 0.57 GB/s on the development machine
(bench/hashing.py). The database keeps its usual name, ``.sconsign.dblite``, in
the build folder: two builds with different BUILD_DIRs keep their own records
(in one file at the root, each lost the other's).
"""
from __future__ import annotations

import SCons.Node.FS
import SCons.SConsign
import SCons.Script
import SCons.Util

SCONS_MAX_DRIFT = 2 * 24 * 60 * 60      # SCons's default --max-drift
MAX_DRIFT = 1
HASH_FORMAT = "sha256"
DATABASE = ".sconsign"                  # SCons's name for it where the format is its default


def trust_settled_signatures(build_dir: str) -> None:
    """Trust .sconsign's signature of a file unchanged for MAX_DRIFT seconds, timed precisely;
    unless --max-drift was given. Hash with HASH_FORMAT unless --hash-format was given. The
    records are kept in ``build_dir`` (repo-relative) unless the SConstruct names a file."""
    if SCons.Script.GetOption("max_drift") == SCONS_MAX_DRIFT:
        SCons.Script.SetOption("max_drift", MAX_DRIFT)
    SCons.Node.FS.Base.getmtime = _precise_mtime
    given = SCons.Script.GetOption("hash_format")
    if given is None:
        SCons.Script.SetOption("hash_format", HASH_FORMAT)
        SCons.Util.set_hash_format(HASH_FORMAT)     # SCons sets it after the SConscripts only
    if SCons.SConsign.DB_Name is None:              # not named by the SConstruct
        # SCons's own names: .sconsign where the format is its default, else .sconsign_<format>
        SCons.SConsign.File(f"{build_dir}/{DATABASE}" + (f"_{given}" if given else ""))


def _precise_mtime(node) -> float | None:
    st = node.stat()
    return st.st_mtime if st else None
