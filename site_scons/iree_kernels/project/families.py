"""Kernel families: one manifest entry (``match``, a glob over export names) substituting every
GEMM executable it matches, each instance specialized on that executable's facts.

``expand`` turns a family entry into one ``Substitution`` per executable it
takes (``executable`` set, ``facts`` the executable's ``ir.contractions``
record, ``workgroup_count`` with the loop sizes written in), and says, for each
executable it declines, why. From there an instance is a substitution like any
other: compiled, checked, verified, benched and locked on its own. Not for
finding the executables (``scons.discovery`` reads them off the model) nor for
what a kernel sees of the facts (``kinds.gemm_interface``).
"""
from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from fnmatch import fnmatchcase
from pathlib import Path

from iree_kernels.ir.gemm_facts import Contraction
from iree_kernels.ir.workgroups import with_sizes
from iree_kernels.kinds.epilogue_spelling import Unsupported
from iree_kernels.kinds.gemm_interface import checked_names
from iree_kernels.kinds.registry import kernel_kind
from iree_kernels.project import timings
from iree_kernels.project.records import Origin, Substitution

FORMAT = 1


@dataclass(frozen=True)
class Found:
    """One executable of a model as a family sees it."""
    export: str
    facts: Contraction | None
    why_not: str = ""               # why it is not a GEMM the facts read, where it is not


@dataclass(frozen=True)
class Expansion:
    """What one family entry made of one model's executables."""
    entry: Substitution
    taken: tuple[Substitution, ...]
    declined: tuple[tuple[str, str], ...]       # (executable, why), matched by the glob only

    def describe(self) -> str:
        """``kernels/x.toml:12: match '*matmul*' of m/llvm-cpu took 1 of 2 executables it
        matched`` and a line per executable: what it computes, or why it was declined."""
        o = self.entry.origin
        text = (f"{o.file}:{o.line}: match '{self.entry.match}' of {self.entry.model}/"
                f"{self.entry.target} took {len(self.taken)} of "
                f"{len(self.taken) + len(self.declined)} executables it matched")
        text += "".join(f"\n  took {s.executable}: {Contraction.from_dict(s.facts).describe()}"
                        for s in self.taken)
        return text + "".join(f"\n  declined {name}: {why}" for name, why in self.declined)


def expand(subs: list[Substitution], found: dict[str, Found], root: Path | None = None,
           keep_all: bool = False) -> tuple[list[Substitution], list[Expansion]]:
    """``subs`` with each family entry replaced by its instances, in order, and what each
    family took and declined. An executable an entry names is not a family's; of two
    families matching one executable, the first in the manifests takes it. A keep = "faster"
    family keeps only the instances its timings file (under ``root``) shows faster, unless
    ``keep_all`` (scons timings: every instance timed)."""
    records: dict[str, dict] = {}
    named = {s.executable for s in subs if not s.match}
    taken_by: dict[str, Substitution] = {}
    result, expansions = [], []
    for sub in subs:
        if not sub.match:
            result.append(sub)
            continue
        taken, declined = [], []
        for name in sorted(found, key=_natural):
            executable = found[name]
            if not fnmatchcase(executable.export, sub.match):
                continue
            why = _declined(name, executable, named, taken_by) or \
                _unwritable(sub, name, executable) or _kind_declines(sub, executable)
            if why:
                declined.append((name, why))
                continue
            made = instance(sub, name, executable)
            if sub.keep == "faster" and not keep_all:
                if sub.timings not in records:
                    records[sub.timings] = timings.load(root / sub.timings, sub.timings)
                why = timings.declined(made, executable.export,
                                       (root / sub.file).read_bytes(), records[sub.timings])
                if why:
                    declined.append((name, why))
                    continue
            taken_by[name] = sub
            taken.append(made)
        result += taken
        expansions.append(Expansion(sub, tuple(taken), tuple(declined)))
    return result, expansions


def instance(sub: Substitution, name: str, found: Found) -> Substitution:
    """The family entry ``sub`` specialized for the executable ``name``; its ``facts``: the
    Contraction's to_dict and the export's name."""
    facts, o = found.facts, sub.origin
    origin = Origin(o.file, o.line, f"{o.entry.split(' (', 1)[0]} (match '{sub.match}': "
                    f"executable '{name}' of {sub.model}/{sub.target})", o.field_lines)
    return replace(sub, executable=name, origin=origin,
                   facts={**facts.to_dict(), "export": found.export},
                   workgroup_count=tuple(with_sizes(e, facts.sizes)
                                         for e in sub.workgroup_count))


def _declined(name: str, executable: Found, named: set, taken_by: dict) -> str:
    if name in named:
        return "an entry of its own names it"
    if name in taken_by:
        first = taken_by[name].origin
        return f"the family at {first.file}:{first.line} took it first"
    if executable.facts is None:
        return executable.why_not
    return ""


def _unwritable(sub: Substitution, name: str, executable: Found) -> str:
    """Why the names of an instance could not go into its generated files, where they could not."""
    try:
        checked_names(name, executable.export, sub.model)
    except Unsupported as e:
        return str(e)
    return ""


def _kind_declines(sub: Substitution, executable: Found) -> str:
    kind = kernel_kind(sub.file)
    return kind.family_decline(executable.facts) if kind and kind.family_decline else ""


def _natural(name: str):
    head, _, number = name.rpartition("_")
    return (head, int(number)) if number.isdigit() else (name, -1)


def dumps(found: dict[str, Found]) -> dict:
    """``found`` as JSON data (discovery's cache)."""
    return {"format": FORMAT, "executables": {
        name: {"export": f.export, "facts": f.facts.to_dict() if f.facts else None,
               "why_not": f.why_not} for name, f in found.items()}}


def loads(data: dict) -> dict[str, Found]:
    """What ``dumps`` wrote; KeyError, TypeError or ValueError where it did not."""
    if data.get("format") != FORMAT:
        raise ValueError(f"format {data.get('format')!r}")
    return {name: Found(str(f["export"]),
                        Contraction.from_dict(f["facts"]) if f["facts"] else None,
                        str(f["why_not"])) for name, f in data["executables"].items()}
