"""executables.json: a model's executables as the checks read them, without the MLIR bindings.

The resolution, the kernel checks, the wrappers and the kinds' interfaces need each
executable's exports, layout and tensors (``executables.Executable``) and its
fingerprint (``fingerprints.fingerprint``). Reading those from MLIR imports IREE's
bindings and parses the executables (about 0.3 s and 0.1-0.2 s); the listing is
written once from ``executables.ops.mlir`` when the model changes, and every
step after it, a kernel edit's checks included, reads JSON.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass

from iree_kernels.core.errors import UserError
from iree_kernels.ir.fingerprints import fingerprints
from iree_kernels.ir.executables import (
    Binding,
    Executable,
    Export,
    Layout,
    Subspan,
    read_executables,
)

FORMAT = 1


@dataclass(frozen=True)
class Listing:
    executables: dict[str, Executable]
    fingerprints: dict[str, str]      # by executable name


def of_program(text: str, source: str) -> Listing:
    """The listing of the executables of ``text`` (an MLIR module; ``source`` names it)."""
    return Listing(read_executables(text, source), fingerprints(text, source))


def dumps(listing: Listing) -> str:
    return json.dumps({"format": FORMAT,
                       "executables": {name: dataclasses.asdict(e)
                                       for name, e in listing.executables.items()},
                       "fingerprints": listing.fingerprints}, indent=1, sort_keys=True) + "\n"


def loads(text: str, source: str) -> Listing:
    """The listing ``dumps`` wrote; a file it did not write is an error naming ``source``."""
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT}")
        return Listing({name: _executable(e) for name, e in data["executables"].items()},
                       {name: str(p) for name, p in data["fingerprints"].items()})
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise UserError(f"not a listing of executables this build wrote ({e}); remove it and "
                        "build again", file=source) from None


def _executable(d: dict) -> Executable:
    return Executable(**{**d, "exports": tuple(_export(e) for e in d["exports"]),
                         "binding_types": tuple(d["binding_types"]),
                         "binding_offsets": _tuples(d["binding_offsets"]),
                         "subspans": tuple(_subspan(s) for s in d["subspans"])})


def _export(d: dict) -> Export:
    layout = d["layout"]
    size = d["workgroup_size"]
    return Export(**{**d, "layout": Layout(tuple(Binding(**b) for b in layout["bindings"]),
                                           layout["constants"]),
                     "workgroup_size": None if size is None else tuple(size)})


def _subspan(d: dict) -> Subspan:
    return Subspan(**{**d, "shape": tuple(d["shape"]), "dynamic_dims": _tuples(d["dynamic_dims"]),
                      "offset_expression": _tuples(d["offset_expression"])})


def _tuples(value):
    """JSON's lists back to the tuples they were, at every depth."""
    return tuple(_tuples(v) for v in value) if isinstance(value, list) else value
