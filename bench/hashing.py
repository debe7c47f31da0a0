"""How fast SCons hashes a model-sized file with each hash format it allows.

    ./setup.sh python -m bench.hashing [--megabytes N] [--repeat R]

writes N MB of random bytes (default 256) to a temporary file and times
``SCons.Util.hash_file_signature``, the function SCons signs each file it
builds with, for md5 (SCons's default), sha1 and sha256 (what the project
sets, ``iree_kernels/scons/signatures.py``): best of R, MB/s and the ratio to
md5, in one run. The file is read once first, so the page cache holds it, as
it holds a file a step has just written.
"""
from __future__ import annotations

import argparse
import os
import tempfile
import time

import SCons.Util

FORMATS = ("md5", "sha1", "sha256")
CHUNK = 64 * 1024                   # SCons's default --hash-chunksize


def seconds(path: str, hash_format: str, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        SCons.Util.hash_file_signature(path, CHUNK, hash_format=hash_format)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.NamedTemporaryFile() as f:
        for _ in range(args.megabytes):
            f.write(os.urandom(1 << 20))
        f.flush()
        SCons.Util.hash_file_signature(f.name, CHUNK, hash_format="md5")
        print(f"{args.megabytes} MB, best of {args.repeat}, {os.cpu_count()} cores")
        times = {name: seconds(f.name, name, args.repeat) for name in FORMATS}
    for name, spent in times.items():
        print(f"{name:7} {spent:6.3f} s  {args.megabytes / spent:6.0f} MB/s  "
              f"{times['md5'] / spent:4.2f}x md5")


if __name__ == "__main__":
    main()
