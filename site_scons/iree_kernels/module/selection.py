"""Which executable each substitution replaces: names, export-name globs and fingerprints.

IREE numbers a model's dispatches in program order (``main_dispatch_7``), so a
re-exported model or one more op renumbers them. A manifest may therefore
select an executable by what it computes: ``export`` is a glob
(``fnmatch``-style) over export names, which spell the op kind and shapes;
``fingerprint`` is ``sha256:`` and a prefix (12 hex digits or more) of the
SHA-256 of the executable's text with its own name replaced by a placeholder
(``fingerprints.normalized``), so it survives renumbering but changes with
the target, the model's options and the computation. Neither the compiler's
version nor its flags are part of it: it is stable across builds with one IREE.

Resolution needs the model's executables, so it runs during the build, once
IREE's front end has written ``executables.mlir``; the result is a small JSON
document the later steps read (``dump``/``loads``). Not for: matching kernels
to layouts (``substitution``), reading manifests (``manifest``).
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import asdict, dataclass

from iree_kernels.ir.fingerprints import name_pattern
from iree_kernels.ir.dump import natural_key
from iree_kernels.core.errors import UserError, closest
from iree_kernels.ir.executables import Executable
from iree_kernels.project.records import DUMP_PREFIX, Substitution
from iree_kernels.ir.program import Program, ProgramExecutable

SHOWN = 10        # candidates an error lists before "and N more"


@dataclass(frozen=True)
class Landing:
    """Where a substitution landed."""
    executable: str
    export: str
    fingerprint: str          # "sha256:<64 hex digits>"


def resolve(substitutions: list[Substitution], executables: dict[str, Executable],
            prints: dict[str, str], seen=()) -> dict[str, Landing]:
    """Each substitution's landing, by ``Substitution.key``; errors name the manifest entry.

    ``prints``: every executable's fingerprint, by name (``fingerprints``).
    ``seen``: fingerprints an earlier resolution of the model landed on (the
    previous ``resolved.json``). A fingerprint that matches no executable now
    but was seen is a computation that changed; one never seen is a mistake
    in the manifest (a mistyped or copied-wrong fingerprint), reported with the
    fingerprints the model's executables have.
    """
    landed: dict[str, Landing] = {}
    taken: dict[str, Substitution] = {}
    seen = frozenset(seen)
    for sub in substitutions:
        name = _select(sub, executables, prints, seen)
        if name in taken:
            first = taken[name].origin
            raise sub.origin.error(f"selects executable '{name}' of {sub.model}/{sub.target}, "
                                   f"which {first.file}:{first.line} ({first.entry}) already "
                                   "substitutes", _field(sub))
        taken[name] = sub
        exports = executables[name].exports
        landed[sub.key] = Landing(name, exports[0].name if exports else "", prints.get(name, ""))
    return landed


def _select(sub: Substitution, executables: dict[str, Executable], prints: dict[str, str],
            seen: frozenset[str]) -> str:
    where = f"{sub.model}/{sub.target}"
    if sub.executable:
        name = dump_named(sub, executables)
        if name != sub.executable:
            return name
        if sub.executable not in executables:
            raise sub.origin.error(
                f"model '{sub.model}' has no executable '{sub.executable}' for target "
                f"'{sub.target}'{closest(sub.executable, executables)}; its executables: "
                f"{', '.join(sorted(executables, key=natural_key)) or 'none'}",
                "from" if sub.folder else "executable")
        if sub.fingerprint and not prints.get(sub.executable, "").startswith(sub.fingerprint):
            raise sub.origin.error(_moved(sub, executables, prints, seen), "fingerprint")
        return sub.executable
    candidates = sorted(executables, key=natural_key)
    if sub.export:
        candidates = [n for n in candidates if executables[n].exports and
                      fnmatch.fnmatchcase(executables[n].export.name, sub.export)]
        if not candidates:
            raise sub.origin.error(f"no executable of {where} has an export matching "
                                   f"'{sub.export}'; its executables: "
                                   f"{_listing(sorted(executables, key=natural_key), executables)}",
                                   "export")
    if sub.fingerprint:
        matching = [n for n in candidates if prints.get(n, "").startswith(sub.fingerprint)]
        if not matching and not _seen(sub.fingerprint, seen) and \
                not any(p.startswith(sub.fingerprint) for p in prints.values()):
            raise sub.origin.error(_unknown(sub, executables, prints), "fingerprint")
        if not matching:
            among = f"with an export matching '{sub.export}' " if sub.export else ""
            raise sub.origin.error(f"no executable of {where} {among}has fingerprint "
                                   f"{sub.fingerprint} (the model or its options changed what "
                                   f"it computes?); candidates: "
                                   f"{_listing(candidates, executables, prints)}", "fingerprint")
        candidates = matching
    if len(candidates) > 1:
        raise sub.origin.error(f"{len(candidates)} executables of {where} match; add a "
                               "fingerprint (or a longer one) to choose one: "
                               f"{_listing(candidates, executables, prints)}", _field(sub))
    return candidates[0]


def dump_named(sub: Substitution, executables) -> str:
    """The executable a file of a folder of kernels names; other substitutions' own.

    A file's stem names an executable as it is, or without the dump's
    ``module_`` prefix, or with each ``$`` of the name written ``_`` (file names
    here take no ``$``: exports of ONNX and torch name theirs
    ``main$async_dispatch_3``) where that matches one executable only.
    """
    if not sub.folder or sub.executable in executables:
        return sub.executable
    stems = [sub.executable]
    if sub.executable.startswith(DUMP_PREFIX):
        stems.append(sub.executable[len(DUMP_PREFIX):])
    for stem in stems[1:]:
        if stem in executables:
            return stem
    spelled = [n for n in executables if "$" in n and n.replace("$", "_") in stems]
    return spelled[0] if len(spelled) == 1 else sub.executable


def _seen(fingerprint: str, seen: frozenset[str]) -> bool:
    return any(p.startswith(fingerprint) for p in seen)


def _unknown(sub: Substitution, executables: dict[str, Executable],
             prints: dict[str, str]) -> str:
    """A fingerprint no executable has, nor had in an earlier build: a mistake in the manifest."""
    has = (f" (executable '{sub.executable}' has {prints.get(sub.executable, 'none')[:23]})"
           if sub.executable else "")
    return (f"no executable of model '{sub.model}' on {sub.target} has fingerprint "
            f"{sub.fingerprint}{has}, nor did one in an earlier build (mistyped? `scons dump` "
            "lists them); the fingerprints of its executables: "
            f"{_listing(sorted(executables, key=natural_key), executables, prints)}")


def _moved(sub: Substitution, executables: dict[str, Executable], prints: dict[str, str],
           seen: frozenset[str] = frozenset()) -> str:
    now = [n for n in sorted(executables, key=natural_key)
           if prints.get(n, "").startswith(sub.fingerprint)]
    if not now and not _seen(sub.fingerprint, seen):
        return _unknown(sub, executables, prints)
    found = (f"the computation with that fingerprint is now executable "
             f"{_listing(now, executables)} (the model's dispatches were renumbered); name it, "
             "or select it by export or fingerprint alone to follow it" if now else
             "no executable has that fingerprint now: what it computes changed")
    return (f"executable '{sub.executable}' has moved: it no longer has fingerprint "
            f"{sub.fingerprint} (it has {prints.get(sub.executable, 'none')[:19]}); {found}")


def renamed_source(text: str, source: str, name: str) -> str:
    """A source kernel (one ``hal.executable``) with its executable renamed ``name``.

    A kernel copied from a dump holds the executable's name, and its export's
    name starts with it: a selector that lands on a renumbered executable needs
    the kernel renamed to match, textually, as ``fingerprints.normalized`` does.
    """
    with Program(text, source) as parsed:
        names = [e.name for e in parsed.executables()]
    if len(names) != 1:
        raise UserError(f"a source kernel selected by export or fingerprint must hold one "
                        f"hal.executable (it holds {len(names)}), which the build renames "
                        "to the executable it lands on", file=source)
    return name_pattern(names[0]).sub(lambda _: name, text)


def _listing(names: list[str], executables: dict[str, Executable],
             prints: dict[str, str] | None = None) -> str:
    shown = []
    for name in names[:SHOWN]:
        exports = executables[name].exports
        detail = [exports[0].name] if exports else []
        if prints:
            detail.append(prints.get(name, "")[:23])
        shown.append(f"{name} ({', '.join(d for d in detail if d)})" if detail else name)
    more = f" and {len(names) - SHOWN} more" if len(names) > SHOWN else ""
    return (", ".join(shown) or "none") + more


def _field(sub: Substitution) -> str:
    return "export" if sub.export else "fingerprint" if sub.fingerprint else "executable"


def dumps(landed: dict[str, Landing]) -> str:
    return json.dumps({key: asdict(landing) for key, landing in sorted(landed.items())},
                      indent=1, sort_keys=True) + "\n"


def loads(text: str) -> dict[str, Landing]:
    return {key: Landing(**fields) for key, fields in json.loads(text).items()}
