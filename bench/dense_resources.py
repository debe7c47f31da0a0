"""Carry a dense-weight model to a machine without the onnx package: its blobs as sizes, refilled there.

    python -m bench.dense_resources strip MODEL.mlir OUT.blobs     # here: kilobytes
    python -m bench.dense_resources fill OUT.blobs MODEL.mlir [--seed N]   # there

A model imported with dense weights (bench/corpus.py's ``onnx_<name>``) keeps
them in its ``{-# dialect_resources #-}`` section, one hex blob per line: 100 MB
of random bytes that neither compress nor fit the GPU machine's carry limit.
``strip`` keeps every line but replaces each blob of more than ``MIN_BYTES``
with its size; ``fill`` writes the blobs back as seeded normal float32 values of
that size (the section's 4-byte alignment header kept), so the model there has
the same graph, shapes and weight bytes, with other values. For timing builds
only: the outputs differ from the original's.
"""
from __future__ import annotations

import argparse
import re
import sys

import numpy as np

MIN_BYTES = 1024
_BLOB_RE = re.compile(r'^(\s*[^\s:]+: "0x)([0-9A-Fa-f]{8})([0-9A-Fa-f]*)(",?)$')
_STRIPPED_RE = re.compile(r'^(\s*[^\s:]+: "0x)([0-9A-Fa-f]{8})@(\d+)(",?)$')


def strip(source, out) -> int:
    """Copy ``source`` to ``out`` with each large blob's payload replaced by ``@<bytes>``; blobs stripped."""
    count = 0
    for line in source:
        match = _BLOB_RE.match(line.rstrip("\n"))
        if match and len(match[3]) > 2 * MIN_BYTES:
            line = f"{match[1]}{match[2]}@{len(match[3]) // 2}{match[4]}\n"
            count += 1
        out.write(line)
    return count


def fill(source, out, seed: int) -> int:
    """Copy ``source`` to ``out`` with each stripped payload refilled with seeded float32 bytes."""
    rng = np.random.default_rng(seed)
    count = 0
    for line in source:
        match = _STRIPPED_RE.match(line.rstrip("\n"))
        if match:
            size = int(match[3])
            values = (rng.standard_normal(size // 4) * 0.05).astype("<f4").tobytes()
            payload = (values + bytes(size - len(values))).hex().upper()
            line = f"{match[1]}{match[2]}{payload}{match[4]}\n"
            count += 1
        out.write(line)
    return count


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("strip", "fill"))
    parser.add_argument("source")
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    with open(args.source, encoding="utf-8") as source, \
            open(args.out, "w", encoding="utf-8") as out:
        count = strip(source, out) if args.mode == "strip" else fill(source, out, args.seed)
    print(f"{args.out}: {count} blob(s) {'stripped' if args.mode == 'strip' else 'filled'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
