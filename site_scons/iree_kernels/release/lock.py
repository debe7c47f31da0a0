"""The lock record of a release: per module and target, what made it, with every file's SHA-256.

Per module and target: the model, every substituted file (the manifest's
kernel, what the build compiled it to, the wrapper iree-compile was given),
the flag files iree-compile read, the versions of the programs that made the
module, and the SHA-256 of each file; read from the files the build wrote
(``substitutions.json`` and the flag files), written as ``lock.json``.

Not for: the timestamp and the checkout's state (``provenance``), the archive
holding the record (``archive``), comparing records (``compare``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.module.substitution import read_record

LOCK_FORMAT = 1
LOCK_MEMBER = "lock.json"

# What each module's entry holds (a record read back lacking one is refused).
MODULE_KEYS = ("model", "target", "source", "substitutions", "flag_files", "tools", "module")


# The shape of a module's entry, as verify-release reads it back: a dict of fields (those a
# "?" ends are optional), a one-item list for a list of those, a type for a value.
_FILE_SHAPE = {"path": str, "sha256": str}
_FLAGS_SHAPE = {"path": str, "sha256": str, "text": str}
MODULE_SHAPE = {
    "model": str, "target": str, "source": _FILE_SHAPE, "module": _FILE_SHAPE,
    "substitutions": [{"executable": str, "mode": str, "kernel?": _FILE_SHAPE,
                       "compiled?": _FILE_SHAPE, "wrapper?": _FILE_SHAPE,
                       "passes?": _FILE_SHAPE, "objects?": [_FILE_SHAPE]}],
    "flag_files": {"options": _FLAGS_SHAPE, "substitutions": _FLAGS_SHAPE},
    "tools": {str: str},
}


def shape_error(value, shape, where: str) -> str | None:
    """Where ``value`` is not of ``shape`` (MODULE_SHAPE's notation), or None."""
    if isinstance(shape, type):
        return None if isinstance(value, shape) and not isinstance(value, bool) else \
            f"{where} is {type(value).__name__}, not {shape.__name__}"
    if isinstance(shape, list):
        if not isinstance(value, list):
            return f"{where} is {type(value).__name__}, not a list"
        return next(filter(None, (shape_error(v, shape[0], f"{where}[{i}]")
                                  for i, v in enumerate(value))), None)
    if not isinstance(value, dict):
        return f"{where} is {type(value).__name__}, not an object"
    if str in shape:                    # any keys: each value of one shape
        return next(filter(None, (shape_error(k, str, f"{where} key") or
                                  shape_error(v, shape[str], f"{where}.{k}")
                                  for k, v in value.items())), None)
    for key, inner in shape.items():
        name = key.rstrip("?")
        if name not in value:
            if key.endswith("?"):
                continue
            return f"{where} lacks {name}"
        problem = shape_error(value[name], inner, f"{where}.{name}")
        if problem:
            return problem
    return None


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class ModuleBuild:
    """Where the build put one module and the files describing it; paths relative to the repo root."""
    model: str
    target: str
    module: str
    record: str                 # substitutions.json
    options_flags: str
    substitution_flags: str
    tools: dict[str, str]       # program name -> what it prints for --version

    @property
    def key(self) -> str:
        return f"{self.target}/{self.model}"


def _file(root: Path, path: str) -> dict:
    try:
        return {"path": path, "sha256": sha256_file(root / path)}
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}")


def _flag_file(root: Path, path: str) -> dict:
    entry = _file(root, path)
    entry["text"] = (root / path).read_text(encoding="utf-8")
    return entry


# The files of one substitution, as substitutions.json names them: the
# manifest's kernel, what the build made of it (or the kernel itself), and in
# wrapped mode the generated hal.executable iree-compile is given.
SUBSTITUTION_FILES = {"kernel": "file", "compiled": "path", "wrapper": "wrapper",
                      "passes": "passes_file"}
FILE_ROLES = {"kernel": "kernel", "compiled": "compiled kernel", "wrapper": "wrapper",
              "passes": "pass pipelines"}


def _substitution(root: Path, recorded: dict) -> dict:
    entry = {"executable": recorded["executable"], "mode": recorded["mode"]}
    for part, key in SUBSTITUTION_FILES.items():
        if recorded.get(key) and (part == "kernel" or recorded[key] != recorded["file"]):
            entry[part] = _file(root, recorded[key])
    if recorded.get("objects"):                # an MLIR kernel may link objects of its own
        entry["objects"] = [_file(root, path) for path in recorded["objects"]]
    return entry


def module_lock(root: str | Path, build: ModuleBuild) -> dict:
    """The lock entry of one built module, read from the files the build wrote."""
    root = Path(root)
    record = read_record((root / build.record).read_text(encoding="utf-8"))
    substitutions = [_substitution(root, applied.fields) for applied in record.substitutions]
    return {"model": build.model, "target": build.target,
            "source": _file(root, record.source),
            "substitutions": sorted(substitutions, key=lambda s: s["executable"]),
            "flag_files": {"options": _flag_file(root, build.options_flags),
                           "substitutions": _flag_file(root, build.substitution_flags)},
            "tools": dict(sorted(build.tools.items())),
            "module": _file(root, build.module)}


def lock_record(modules: list[dict], epoch: int, checkout: dict | None = None) -> dict:
    """``checkout``: ``checkout_state`` of the released checkout."""
    lock = {"format": LOCK_FORMAT, "source_date_epoch": epoch,
            "modules": sorted(modules, key=lambda m: (m["target"], m["model"]))}
    if checkout is not None:
        lock["checkout"] = checkout
    return lock


def lock_text(lock: dict) -> str:
    return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
