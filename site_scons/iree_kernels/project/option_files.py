"""The files iree-compile flags in a model's ``options`` name: dependencies of the steps reading them.

A path in ``options`` is passed to iree-compile as written, and iree-compile
runs in the repository root, so a relative path is relative to the root, as
every path in a manifest is. Each flag is read by one phase:

| flag | value | phase |
|---|---|---|
| ``--iree-preprocessing-transform-spec-filename`` | path | front end |
| ``--iree-preprocessing-pdl-spec-filename`` | path | front end |
| ``--iree-parameter-import`` | ``[scope=]path`` | front end |
| ``--iree-codegen-tuning-spec-path`` | path | codegen |
| ``--iree-codegen-transform-dialect-library`` | ``path[@sequence]`` | codegen |
| ``--iree-link-bitcode`` | ``[arch=]path,...`` | codegen |

The front end is the step that writes ``executables.mlir`` (everything after
it follows from that file's content); codegen is the module's compile and
the per-executable codegen cache, whose entries are keyed by these files'
contents too. Flags that name programs (``--iree-cuda-use-ptxas-from``) or
outputs (``--iree-hal-dump-*``) are not dependencies.
"""
from __future__ import annotations

import hashlib
import os

from iree_kernels.core import flag_files

FRONT_END, CODEGEN = "front end", "codegen"


def _path(value: str) -> list[str]:
    return [value]


def _scoped(value: str) -> list[str]:
    return [value.split("=", 1)[-1]]


def _sequence(value: str) -> list[str]:
    return [value.split("@", 1)[0]]


def _bitcode(value: str) -> list[str]:
    return [entry.split("=", 1)[-1] for entry in value.split(",") if entry]


FILE_FLAGS = {
    "iree-preprocessing-transform-spec-filename": (FRONT_END, _path),
    "iree-preprocessing-pdl-spec-filename": (FRONT_END, _path),
    "iree-parameter-import": (FRONT_END, _scoped),
    "iree-codegen-tuning-spec-path": (CODEGEN, _path),
    "iree-codegen-transform-dialect-library": (CODEGEN, _sequence),
    "iree-link-bitcode": (CODEGEN, _bitcode),
}


def files_named(flags) -> list[tuple[str, str]]:
    """(path, phase) of every file ``flags`` name, in order, each once."""
    found: list[tuple[str, str]] = []
    for flag in flags:
        name, has_value, value = flag.lstrip("-").partition("=")
        if not has_value or name not in FILE_FLAGS:
            continue
        phase, paths = FILE_FLAGS[name]
        for path in paths(value):
            if path and (path, phase) not in found:
                found.append((path, phase))
    return found


def codegen_key(flag_lines: list[str], root: str) -> list[str]:
    """``path sha256:<digest>`` of every codegen file the flag file's lines name: part of the
    codegen cache's keys, which name flags, not the contents of the files they point to."""
    flags = [flag_files.unquote(line) for line in flag_lines]
    key = []
    for path, phase in files_named(flags):
        if phase == CODEGEN:
            with open(os.path.join(root, path), "rb") as f:
                key.append(f"{path} sha256:{hashlib.file_digest(f, 'sha256').hexdigest()}")
    return key
