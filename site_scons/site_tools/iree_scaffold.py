"""SCons tool: 'scons scaffold' writes a kernel skeleton and its manifest entry.

Builder-less: ``env.IreeScaffold(declared, listing, executable=, language=, manifest=)``
declares the ``scaffold`` alias, whose action renders ``iree_kernels.project.scaffold``
for one executable of a module IreeKernelProject declared into
``kernels/<target>/`` and appends the entry to a manifest. It never overwrites
a kernel.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import SCons.Action

from iree_kernels.ir import executables
from iree_kernels.project import scaffold
from iree_kernels.ir import fingerprints
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import link_on_the_way, read_text, write_atomically
from iree_kernels.scons.escaping import escape
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.reporting import reporting_user_errors


@reporting_user_errors
def write_scaffold(target, source, env):
    spec = json.loads(source[0].read())
    sources_dump, listing = Path(str(source[1])), Path(str(source[2]))
    found = executables.read_executables(sources_dump.read_text(), str(sources_dump))
    name = scaffold.select(spec["executable"], found, spec["model"], spec["target"])
    translated_file = listing.with_name("executables.targets.mlir")
    translated = executables.read_executables(translated_file.read_text(), str(translated_file))
    # Where IREE's codegen fails (the listing says why): a wrapped skeleton, its own launch.
    dumped = sorted(listing.parent.glob(f"sources/*_{name}.mlir"))
    fingerprint = fingerprints.fingerprints(sources_dump.read_text(), str(sources_dump))[name]
    result = scaffold.skeleton(spec["language"], spec["model"], spec["target"], found[name],
                               translated.get(name), dumped[0].read_text() if dumped else "",
                               fingerprint[:len("sha256:") + 16])
    kernel, manifest = Path(result.file), Path(spec["manifest"])
    for path, what in ((kernel, "the kernel"), (manifest, "SCAFFOLD_MANIFEST")):
        _refuse_links(path, what)
    if os.path.lexists(kernel):
        raise UserError(f"{kernel} exists already; move it away to scaffold it again")
    try:
        previous = read_text(manifest) if os.path.lexists(manifest) else ""
    except (OSError, ValueError) as e:
        raise UserError(f"SCAFFOLD_MANIFEST: {manifest} {getattr(e, 'strerror', None) or e}") \
            from None
    write_atomically(str(kernel), result.text)
    write_atomically(str(manifest), previous + result.entry)
    chosen = f" for executable {name}" if name != spec["executable"] else ""
    print(f"scaffold: wrote {kernel}{chosen} and added its entry to {manifest}; edit the "
          "kernel, then run scons")


def _refuse_links(path: Path, what: str) -> None:
    """UserError where ``path`` (relative to the repo root) leaves the repo or goes through a link."""
    if path.is_absolute() or ".." in path.parts:
        raise UserError(f"{what}: {path} is not a path inside the repository")
    linked = link_on_the_way(".", path.as_posix(), itself=True)
    if linked:
        raise UserError(f"{linked} is a symbolic link; scaffold never writes through one "
                        f"(writing {path} would follow it, maybe out of the repository): "
                        "replace it with a folder or file")


def declare_scaffold(env, declared: DeclaredModule, listing, *, executable: str, language: str,
                     manifest: str):
    """'scons scaffold': a skeleton of ``executable`` of the module, in ``language``."""
    spec = {"model": declared.model.name, "target": declared.target.name,
            "executable": executable, "language": language, "manifest": manifest}
    node = env.Alias("scaffold", [env.Value(json.dumps(spec, sort_keys=True)),
                                  declared.executables, listing],
                     SCons.Action.Action(write_scaffold, escape(f"SCAFFOLD {spec['model']}/"
                                         f"{spec['target']}/{spec['executable']}")))
    env.AlwaysBuild(node)
    return node


def generate(env):
    env.AddMethod(declare_scaffold, "IreeScaffold")


def exists(env):
    return True
