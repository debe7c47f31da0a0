"""Which executables a model has, known while SCons reads the build: what families expand over.

A family entry (``match``) becomes one substitution per GEMM executable it
takes, and SCons needs every step declared before it builds any: so, as a
configure step would, the front end runs while the build is read, once for
each model, target and set of flags, and its executables' exports and facts
(``ir.contractions``) are kept in ``BUILD_DIR/.families/<digest>.json``, the
digest taken over everything that decides them (the model's bytes, the
flags and the files they name, iree-compile's version). A build that finds
the file reads it: a no-op or a kernel edit runs nothing here. A model the
build imports (``.onnx``, ``.pt2``) is read from its import, which must then
be built first. Not for the expansion itself (``project.families``).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import read_text, scratch_folder, write_atomically
from iree_kernels.ir.executables import read_executables
from iree_kernels.ir.program_text import executables_only
from iree_kernels.project import families, option_files
from iree_kernels.scons.spawn import timeouts

FOLDER = ".families"


def executables_of(env, model, flags: list[str], build) -> dict[str, families.Found]:
    """Each executable of ``model`` compiled with ``flags``, as families see it."""
    root = Path(env.Dir("#").abspath)
    source = root / model.source
    if not source.is_file():
        raise UserError(f"model '{model.name}' is a family's (match), whose executables are "
                        f"read while the build is: build its import first (scons "
                        f"{model.source})" if model.imported else
                        f"model '{model.name}': cannot read {model.source}",
                        file=model.origin.file, line=model.origin.line)
    compiler = env.subst("$IREE_COMPILE")
    limits = timeouts(env)
    digest = _digest(root, source, flags, toolchains.version(compiler, timeouts=limits))
    cache = Path(build.abspath) / FOLDER / f"{digest}.json"
    try:
        return families.loads(json.loads(read_text(cache)))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    found = _read(root, compiler, source, flags, limits, Path(build.abspath), model)
    try:
        write_atomically(cache, json.dumps(families.dumps(found), sort_keys=True))
    except OSError:                 # a read-only checkout answering --question: not kept
        pass
    return found


def _digest(root: Path, source: Path, flags: list[str], version: str) -> str:
    h = hashlib.sha256(f"{families.FORMAT}\0{version}\0".encode())
    h.update(json.dumps(flags).encode())
    for path, _ in option_files.files_named(flags):
        named = Path(path) if Path(path).is_absolute() else root / path
        h.update(_file_digest(named).encode() if named.is_file() else b"-")
    h.update(_file_digest(source).encode())
    return h.hexdigest()


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _read(root: Path, compiler: str, source: Path, flags: list[str], limits, build: Path,
          model) -> dict[str, families.Found]:
    from iree_kernels.ir.contractions import read_contractions

    print(f"FAMILIES  reading the executables of {model.source}", file=sys.stdout, flush=True)
    build.mkdir(parents=True, exist_ok=True)
    with scratch_folder(build, "families") as work:
        out = Path(work) / "executables.mlir"
        # From the repository, as the build runs it: the flags name files relative to it.
        toolchains.run([compiler, str(source), *flags, "--compile-to=executable-sources",
                        "-o", str(out)], file=model.source, timeouts=limits, cwd=root,
                       doing=f"read the executables of model '{model.name}'")
        text = executables_only(out.read_text(encoding="utf-8"))
    listed = read_executables(text, model.source)
    facts = read_contractions(text, model.source)
    return {name: families.Found(e.export.name if e.exports else name,
                                 None if isinstance(facts[name], str) else facts[name],
                                 facts[name] if isinstance(facts[name], str) else "")
            for name, e in listed.items()}
