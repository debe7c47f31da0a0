"""The one-line edit the benches make to an MLIR kernel: another binary, the same shapes and launch.

The first f32 constant of the kernel moves by ``n / 1024`` (one written in hex,
such as -inf, by ``n`` in its bits): what it compiles to changes (a dead constant would be folded away, and a build that stops where
a step's output is unchanged would skip the rest). Where the kernel has no
f32 constant, a dead index constant goes at the top of its dispatch function:
the IR changes, the binary may not.
"""
from __future__ import annotations

import re

_F32_RE = re.compile(r"arith\.constant (-?[0-9]+\.[0-9]+(?:e[+-]?[0-9]+)?) : f32")
_F32_HEX_RE = re.compile(r"arith\.constant 0x([0-9A-Fa-f]{8}) : f32")
_FUNCTION_RE = re.compile(r"(func\.func @\S+\(\) [^\n]*\{\n)")


def edit_mlir_kernel(text: str, n: int) -> str:
    """``text`` with edit number ``n`` (0, 1, ...) made; each number another edit."""
    n += 1
    found = _F32_RE.search(text)
    if found:
        value = float(found.group(1)) + n / 1024
        return text[:found.start(1)] + f"{value:e}" + text[found.end(1):]
    found = _F32_HEX_RE.search(text)           # -inf and the like: its bits move instead
    if found:
        bits = (int(found.group(1), 16) + n) % (1 << 32)
        return text[:found.start(1)] + f"{bits:08X}" + text[found.end(1):]
    return _FUNCTION_RE.sub(lambda m: m.group(1) + f"  %bench_edit{n} = arith.constant {n} : index\n",
                            text, count=1)
