"""SCons tool: dump a model's executables for people to read and edit.

Method:
  env.IreeDumpListing(declared)   'dump': the listing of a module IreeKernelProject declared

Builder:
  IreeDump   options.flags + executables.mlir -> dump/executables.txt

Everything comes from ``executables.mlir``, the model at IREE's
executable-sources phase: IREE's front end does not run again.

Writes into the target's folder: ``sources/`` (one .mlir per executable, the
files to copy, edit and substitute), and on request (``$IREE_DUMP_KINDS``,
from ``scons DUMP=sources,configurations,binaries,benchmarks dump``)
``configurations/``, ``binaries/`` and ``benchmarks/``; ``executables.targets.mlir``
(the translated executables); and ``executables.txt``, the listing of each
executable's export, fingerprint, bindings, push constants and launch shape.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import SCons.Action
import SCons.Builder

from iree_kernels.ir import dump, executables, translation
from iree_kernels.ir import fingerprints
from iree_kernels.module import selection
from iree_kernels.core import toolchains
from iree_kernels.ir.program import Program
from iree_kernels.core.files import write_atomically
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import timeouts


@reporting_user_errors
def write_dump(target, source, env):
    options, sources_dump = (str(s) for s in source[:2])
    model = env["IREE_DUMP_MODEL"]
    folder = Path(target[0].abspath).parent
    kinds = dump.parse_kinds(env["IREE_DUMP_KINDS"])
    for kind in dump.KINDS:
        shutil.rmtree(folder / kind, ignore_errors=True)
    program = Path(sources_dump).read_text(encoding="utf-8")
    if "sources" in kinds:
        dump.write_sources(program, sources_dump, folder / "sources")
    compile_ = [env.subst("$IREE_COMPILE"), f"@{options}"]
    with Program(program, sources_dump) as parsed:
        # Each executable apart: one IREE cannot translate leaves the others listed.
        result = translation.translate(
            lambda argv: toolchains.run([*compile_, *argv, *dump.dump_flags(kinds, folder, True)],
                                        file=sources_dump, doing="translate the executables",
                                        timeouts=timeouts(env)),
            parsed.executables(), folder, parsed.resources)
    translated = folder / "executables.targets.mlir"
    log = folder / "codegen-errors.log"
    log.unlink(missing_ok=True)
    if result.failures:
        write_atomically(str(log), result.log + "\n")
        translated.write_text(result.text, encoding="utf-8")
    after = [k for k in kinds if k in dump.AFTER_TRANSLATION]
    if after and not result.failures:
        toolchains.run([*compile_, sources_dump, "--compile-from=executable-sources",
                        *dump.dump_flags(kinds, folder, False), "-o", "/dev/null"], file=sources_dump,
                       timeouts=timeouts(env))
    elif after:
        toolchains.run([*compile_, str(translated), "--compile-from=executable-targets",
                        "--iree-hal-link-executables=false",
                        *dump.dump_flags(["binaries"] if "binaries" in after else [], folder,
                                         False), "-o", "/dev/null"], file=str(translated),
                       timeouts=timeouts(env))
    text = dump.listing(
        model, env["IREE_DUMP_TARGET"],
        executables.read_executables(translated.read_text(), str(translated)),
        executables.read_executables(program, sources_dump),
        fingerprints.fingerprints(program, sources_dump), result.failures)
    if result.failures:
        text += (f"\nIREE's errors: {log}"
                 + ("; no benchmarks dumped: the model's compile fails" if "benchmarks" in after
                    else "") + "\n")
    text += _derived_kernels(source, folder)
    if env.get("IREE_DUMP_FAMILIES"):
        families = Path(env["IREE_DUMP_FAMILIES"]).read_text(encoding="utf-8")
        text += "\nFamilies (match): the executables each took and declined\n" + families
    write_atomically(target[0].abspath, text)
    print(text + f"(files in {folder})\n", end="")


def _derived_kernels(source, folder: Path) -> str:
    """Each kernel iree-opt derives (``passes``), copied to derived/ beside sources/; its lines."""
    shutil.rmtree(folder / "derived", ignore_errors=True)
    if len(source) < 3:
        return ""
    (folder / "derived").mkdir()
    lines = ["", "Derived kernels (passes), in derived/ beside the sources they come from:"]
    landed = selection.loads(source[3].get_text_contents())
    for item, node in zip(read_spec(source[2]), source[4:]):
        copy = folder / "derived" / node.name.replace(".derived.mlir", ".mlir")
        shutil.copyfile(node.abspath, copy)
        lines.append(f"  {landed[item['key']].executable}  derived/{copy.name}  {item['entry']}: "
                     + " then ".join(item["passes"]))
    return "\n".join(lines) + "\n"


def _dump_emitter(target, source, env):
    env.Clean(target[0], target[0].dir)
    translated = target[0].dir.File("executables.targets.mlir")
    # The dump folders are not targets: make them whole on every 'scons dump'.
    env.AlwaysBuild(target[0])
    env.NoCache([target[0], translated])
    return [target[0], translated], source


def declare_listing(env, declared: DeclaredModule):
    derived = [s for s in declared.substitutions if s.passes]
    # Shown beside the sources they are derived from: the derivation runs for the listing.
    shown = [spec_value(env, [{"key": s.key, "passes": list(s.passes),
                               "entry": f"{s.origin.file}:{s.origin.line}"} for s in derived]),
             declared.resolved, *(declared.kernels[s.key].kernel for s in derived)
             ] if derived else []
    listing = env.IreeDump(declared.folder.Dir("dump").File("executables.txt"),
                           [declared.options, declared.executables, *shown],
                           IREE_DUMP_KINDS=env["DUMP"], IREE_DUMP_TARGET=declared.target.name,
                           IREE_DUMP_MODEL=declared.model.name,
                           IREE_DUMP_FAMILIES=declared.families.abspath if declared.families
                           else "")
    if declared.families:
        env.Depends(listing, declared.families)
    env.Alias("dump", listing)
    return listing


def generate(env):
    env.SetDefault(IREE_DUMP_KINDS="sources", IREE_DUMPLISTCOMSTR="Dumping $TARGET")
    env["BUILDERS"]["IreeDump"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_dump, "$IREE_DUMPLISTCOMSTR",
                                   varlist=["IREE_DUMP_KINDS", "IREE_DUMP_TARGET",
                                            "IREE_DUMP_MODEL"]),
        emitter=_dump_emitter)
    env.AddMethod(declare_listing, "IreeDumpListing")


def exists(env):
    return True
