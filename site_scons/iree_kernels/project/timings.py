"""Only winners go in: a family entry with ``keep = "faster"`` keeps an instance only where a
device measured it faster than IREE's own executable, as its ``timings`` file records.

A kernel slower than IREE's executable makes the model slower; whether it is
slower is known only on the device, and a build must not time anything. So
``scons timings`` on the device (every instance declared, whatever the file
says) benchmarks each instance beside IREE's executable and writes the figures
into the file the entry names, which the repo checks in; every later build, on
any machine, reads the file and declines the instances it does not show
``MARGIN`` faster. A record holds for one instance as it was timed: the model's
export, the kernel file's bytes, the instance's facts and the entry's own
fields (``instance_digest``); an instance changed since is not timed, and
declined until it is. Not for running the benchmarks (``check.benchmarks``).
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import read_text, write_atomically
from iree_kernels.project.records import Substitution

FORMAT = 1
MARGIN = 0.05           # an instance is kept where it takes at most 95% of IREE's time
KEEP_VALUES = ("all", "faster")


@dataclass(frozen=True)
class Timing:
    model: str
    target: str
    export: str
    instance: str               # instance_digest of what was timed
    iree_us: float
    kernel_us: float
    device: str


def instance_digest(sub: Substitution, kernel: bytes) -> str:
    """What a timing holds for: the kernel's bytes, the instance's facts and launch, the
    entry's own fields."""
    h = hashlib.sha256(kernel)
    h.update(json.dumps({"facts": sub.facts, "kind": sub.kind_fields, "mode": sub.mode,
                         "count": list(sub.workgroup_count), "size": list(sub.workgroup_size),
                         "function": sub.function}, sort_keys=True).encode())
    return h.hexdigest()


def load(path: Path, shown: str) -> dict[tuple[str, str, str, str], Timing]:
    """The records of a timings file by (model, target, export, instance); none if it does
    not exist yet; a file this module did not write is an error naming ``shown``."""
    if not path.exists():
        return {}
    try:
        data = json.loads(read_text(path))
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')!r}, not {FORMAT}")
        records = [Timing(str(r["model"]), str(r["target"]), str(r["export"]),
                          str(r["instance"]), float(r["iree_us"]), float(r["kernel_us"]),
                          str(r["device"])) for r in data["timings"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as e:
        raise UserError(f"not a timings file scons timings wrote ({e}); write it again with "
                        "scons timings on the device", file=shown) from None
    return {(t.model, t.target, t.export, t.instance): t for t in records}


def declined(sub: Substitution, export: str, kernel: bytes, records: dict) -> str:
    """Why ``sub`` (an instance of a keep = "faster" family) is not kept, or ''."""
    timing = records.get((sub.model, sub.target, export, instance_digest(sub, kernel)))
    if timing is None:
        return (f"not timed as it is now: keep = \"faster\" keeps it once scons timings on a "
                f"{sub.target} device writes its figures into {sub.timings}")
    if timing.kernel_us > (1 - MARGIN) * timing.iree_us:
        return (f"IREE's executable is as fast or faster on {timing.device}: "
                f"{timing.iree_us:.1f} us against the kernel's {timing.kernel_us:.1f} us "
                f"({sub.timings})")
    return ""


def merged(path: Path, shown: str, timed: list[Timing]) -> str:
    """The timings file ``path`` with ``timed`` in place of the records of the same instances'
    exports (one record per model, target and export)."""
    kept = {(t.model, t.target, t.export): t for t in load(path, shown).values()}
    kept.update({(t.model, t.target, t.export): t for t in timed})
    return json.dumps({"format": FORMAT, "timings": [asdict(kept[k]) for k in sorted(kept)]},
                      indent=1, sort_keys=True) + "\n"


def write(path: Path, text: str) -> None:
    write_atomically(path, text)
