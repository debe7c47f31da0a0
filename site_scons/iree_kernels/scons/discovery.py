"""Which executables a model has, known while SCons reads the build: what families expand over.

A family entry (``match``) becomes one substitution per GEMM executable it
takes, and SCons needs every step declared before it builds any: so, as a
configure step would, the front end runs while the build is read, once for
each model, target and set of flags, and its executables' exports and facts
(``ir.contractions``) are kept in ``BUILD_DIR/.families/<digest>.json``, the
digest taken over everything that decides them (the model's bytes, the
flags and the files they name, iree-compile's version, the source of the
facts' reader; for a model the build imports, ``.onnx`` or ``.pt2``, its
importer's packages). A build that finds
the file reads it: a no-op or a kernel edit runs nothing here (nor hashes the model again
while its stat stays the same: ``core.stat_memo``). An imported
model is imported here, with the import step's own command, and the import
kept for that step to take (``scons.imports.ahead_path``): a clean build
imports it once. Not for the expansion itself (``project.families``).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
from pathlib import Path

from iree_kernels.core import processes, toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import read_text, scratch_folder, write_atomically
from iree_kernels.core.stat_memo import StatMemo, sha256
from iree_kernels.ir import contractions, dispatch_body, epilogues, executables, gemm_facts
from iree_kernels.ir.executables import read_executables
from iree_kernels.ir.program_text import executables_only
from iree_kernels.project import families, option_files
from iree_kernels.scons import imports
from iree_kernels.scons.build_folder import file_memo
from iree_kernels.scons.spawn import timeouts

FOLDER = ".families"


def executables_of(env, model, flags: list[str], build) -> dict[str, families.Found]:
    """Each executable of ``model`` compiled with ``flags``, as families see it."""
    root = Path(env.Dir("#").abspath)
    node = env.Dir("#").File(model.source)
    imported = node.has_builder()           # .onnx, .pt2: the build's import of it
    source = Path(node.sources[0].abspath) if imported else root / model.source
    if not source.is_file():
        raise UserError(f"model '{model.name}': cannot read {source}",
                        file=model.origin.file, line=model.origin.line)
    compiler = env.subst("$IREE_COMPILE")
    limits = timeouts(env)
    versions = [toolchains.version(compiler, timeouts=limits),
                *(imports.importer_versions(node) if imported else [])]
    digest = _digest(root, source, flags, "\0".join(versions), file_memo(env))
    cache = Path(build.abspath) / FOLDER / f"{digest}.json"
    try:
        return families.loads(json.loads(read_text(cache)))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    with scratch_folder(_made(build), "import") as work:
        mlir = _imported(env, node, Path(work), model) if imported else source
        found = _read(root, compiler, mlir, flags, limits, Path(build.abspath), model)
        if imported:
            _keep_for_the_import_step(env, node, mlir, build)
    try:
        write_atomically(cache, json.dumps(families.dumps(found), sort_keys=True))
    except OSError:                 # a read-only checkout answering --question: not kept
        pass
    return found


def _made(build) -> Path:
    Path(build.abspath).mkdir(parents=True, exist_ok=True)
    return Path(build.abspath)


def _keep_for_the_import_step(env, node, mlir: Path, build) -> None:
    kept = imports.ahead_path(build.abspath, imports.import_argv(node), sha256(
        file_memo(env), node.sources[0].abspath), imports.importer_versions(node))
    try:
        kept.parent.mkdir(parents=True, exist_ok=True)
        os.replace(mlir, kept)
    except OSError:                 # a read-only checkout answering --question: not kept
        pass


def _imported(env, node, work: Path, model) -> Path:
    """``node``'s import (an ImportCommand's step) run into ``work``: the MLIR it wrote."""
    prefix = imports.prefix_of(node)
    out = work / f"{model.name}.mlir"
    argv = [str(out) if a == node.get_path() else a for a in imports.import_argv(node)]
    print(f"FAMILIES  importing {node.sources[0]} to read its executables", flush=True)
    limit = float(node.get_build_env().subst(f"${prefix}TIMEOUT") or 0) or None
    try:
        result = processes.run([toolchains.real_program(argv[0]), *argv[1:]], limit=limit,
                               stderr=processes.STDOUT)
    except (OSError, processes.TimeLimit) as e:
        raise UserError(f"model '{model.name}': cannot import {node.sources[0]} to read its "
                        f"executables: {getattr(e, 'strerror', None) or e}",
                        file=model.origin.file, line=model.origin.line) from None
    if result.returncode != 0 or not out.is_file():
        last = (result.stdout.strip().splitlines() or ["no output"])[-1]
        raise UserError(f"model '{model.name}': cannot import {node.sources[0]} to read its "
                        f"executables: {last}", file=model.origin.file, line=model.origin.line)
    return out


def _digest(root: Path, source: Path, flags: list[str], version: str, memo: StatMemo) -> str:
    h = hashlib.sha256(f"{families.FORMAT}\0{version}\0{_reader()}\0".encode())
    h.update(json.dumps(flags).encode())
    for path, _ in option_files.files_named(flags):
        named = Path(path) if Path(path).is_absolute() else root / path
        h.update(sha256(memo, named).encode() if named.is_file() else b"-")
    h.update(sha256(memo, source).encode())
    return h.hexdigest()


@functools.cache
def _reader() -> str:
    """The digest of the modules that read the facts: what another version of them kept is not
    this version's facts."""
    h = hashlib.sha256()
    for module in (contractions, dispatch_body, epilogues, executables, gemm_facts):
        h.update(Path(module.__file__).read_bytes())
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
