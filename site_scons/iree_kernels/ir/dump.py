"""Dumps of a model's executables for people: the files, and a listing of what they hold.

``scons dump`` writes, per model and target, the executables' sources (and on
request configurations, binaries, benchmarks) into a stable folder, and a
listing of each executable: export name, bindings, push constants and IREE's
launch shape, read from the translated executables with the MLIR bindings, and
the fingerprint a manifest may select it by (``selection``).
"""
from __future__ import annotations

import re
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Executable
from iree_kernels.ir.program import Program

KINDS = {
    "sources": "",            # written here, from the executable-sources program
    "configurations": "--iree-hal-dump-executable-configurations-to",
    "binaries": "--iree-hal-dump-executable-binaries-to",
    "benchmarks": "--iree-hal-dump-executable-benchmarks-to",
}
# Binaries and benchmarks are written only by a compile to the end.
AFTER_TRANSLATION = ("binaries", "benchmarks")


def parse_kinds(text: str) -> list[str]:
    kinds = [k.strip() for k in text.split(",") if k.strip()]
    for kind in kinds:
        if kind not in KINDS:
            raise UserError(f"DUMP: unknown kind '{kind}'; kinds: {', '.join(KINDS)}")
    return kinds


def dump_flags(kinds: list[str], folder: Path, translation: bool) -> list[str]:
    """The dump flags of one iree-compile run: the translating one, or the full compile."""
    return [f"{KINDS[k]}={folder / k}" for k in kinds
            if KINDS[k] and (k in AFTER_TRANSLATION) != translation]


def write_sources(program: str, source: str, folder: Path) -> None:
    """One ``<module>_<executable>.mlir`` per executable, as ``--iree-hal-dump-executable-sources-to`` writes.

    That flag writes nothing when iree-compile resumes from executable-sources:
    this writes the same files from that program. Each is ready to edit and
    substitute as a source.
    """
    folder.mkdir(parents=True, exist_ok=True)
    with Program(program, source) as parsed:
        prefix = parsed.module_name()
        for executable in parsed.executables():
            text = executable.as_dumped()
            file = f"{prefix}_{executable.name}".replace("/", "_")
            (folder / f"{file}.mlir").write_text(text + "\n", encoding="utf-8")


def listing(model: str, target: str, translated: dict[str, Executable],
            sources: dict[str, Executable], prints: dict[str, str] | None = None,
            failures: dict[str, str] | None = None) -> str:
    """One paragraph per executable: what a kernel replacing it must accept and how it runs.

    ``prints``: fingerprints by name (``fingerprints.fingerprints``), for manifests to select by.
    ``failures``: IREE's error for each executable its codegen cannot translate;
    those are listed from their sources, without a launch shape.
    """
    prints, failures = prints or {}, failures or {}
    lines = [f"# Executables of {model} for {target}", ""]
    if failures:
        lines += [f"# IREE's {target} codegen fails for {len(failures)} of {len(sources)}: "
                  "they have no launch shape here ('codegen fails'); a wrapped kernel "
                  "can replace them", ""]
    for name in sorted(set(translated) | set(sources), key=natural_key):
        executable = translated.get(name) or sources[name]
        export = executable.export
        tensors = sources.get(name, executable).subspans
        lines.append(f"{name}")
        lines.append(f"  export          {export.name}")
        if name in prints:
            lines.append(f"  fingerprint     {prints[name][:len('sha256:') + 16]}")
        for binding in export.layout.bindings:
            access = "read-only" if binding.read_only else "read-write"
            held = [s.describe() for s in tensors if s.binding == binding.index] or [""]
            for number, tensor in enumerate(held):
                head = f"binding {binding.index}" if number == 0 else ""
                lines.append(f"  {head:15} {access if number == 0 else '':10} {tensor}".rstrip())
        lines.append(f"  push constants  {export.layout.constants} (32-bit)")
        lines.append(f"  workload        {export.workload} value(s): "
                     + (", ".join(f"w{i}" for i in range(export.workload)) or "none"))
        if name not in translated:
            why = failures.get(name, "not translated")
            lines.append(f"  codegen fails   IREE's {target} codegen: {why}")
            lines.append("")
            continue
        size = "x".join(str(n) for n in export.workgroup_size) if export.workgroup_size else "-"
        lines.append(f"  workgroup size  {size}")
        count = workload_names(export.count_text).replace("\n", "; ") or "-"
        lines.append(f"  workgroup count {count}")
        lines.append("")
    return "\n".join(lines)


def workload_names(count: str) -> str:
    """The count region's %arg1, %arg2, ... are the workload values w0, w1, ..."""
    return re.sub(r"%arg(\d+)", lambda m: f"w{int(m.group(1)) - 1}" if m.group(1) != "0"
                  else "%device", count)


def natural_key(name: str):
    """Sorts executable names by their number: main_dispatch_2 before main_dispatch_10."""
    digits = "".join(c for c in name.rsplit("_", 1)[-1] if c.isdigit())
    return (name.rsplit("_", 1)[0], int(digits) if digits else -1, name)
