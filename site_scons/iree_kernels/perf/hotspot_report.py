"""The hotspot report: its rows, ranked, as a table, JSON and a picture.

A row is one entry point and workload of a model: how often the program
dispatches it, IREE's time per dispatch (the median of the repetitions, their
spread kept) and, where a kernel is substituted for its executable, the
kernel's. Rows rank by total time; rows whose totals lie within each other's
spread are ranked as ties. ``write`` puts the report beside its .txt as .json
and .png (where matplotlib is installed).

Not for: counting dispatch sites, compiling or timing benchmarks
(``hotspots``).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from iree_kernels.check import benchmarks
from iree_kernels.core.files import write_atomically


@dataclass
class Hotspot:
    executable: str
    export: str
    dispatches: int
    function: str = ""                  # IREE's benchmark function, where it dumps one
    workload: list[int] | None = None
    module: str = ""                    # the compiled benchmark module holding ``function``
    us_per_dispatch: float | None = None
    substituted_by: str = ""
    note: str = ""
    where: list[str] = field(default_factory=list)
    us_min: float | None = None         # the fastest and slowest repetition, per dispatch
    us_max: float | None = None
    repetitions: int = 0
    kernel_module: str = ""             # the benchmark module with the substituted kernel in place
    kernel_us: float | None = None      # its time per dispatch (median)
    kernel_note: str = ""               # why the kernel has no time

    @property
    def total_us(self) -> float | None:
        return None if self.us_per_dispatch is None else self.us_per_dispatch * self.dispatches

    @property
    def spread(self) -> float | None:
        """Half the range of the repetitions, as a percentage of the median."""
        if self.repetitions < 2 or not self.us_per_dispatch:
            return None
        return 50 * (self.us_max - self.us_min) / self.us_per_dispatch

    @property
    def speedup(self) -> float | None:
        """IREE's time over the substituted kernel's."""
        return self.us_per_dispatch / self.kernel_us if self.kernel_us and self.us_per_dispatch \
            else None


@dataclass
class Report:
    model: str
    target: str
    device: str
    rows: list[Hotspot]
    flags: str = ""                     # iree-benchmark-module's flags



def ranked(rows: list[Hotspot]) -> list[Hotspot]:
    """Timed rows by total time, most first; then the others by dispatches; ties in program order."""
    return sorted(rows, key=lambda r: (r.total_us is None, -(r.total_us or 0), -r.dispatches))


def ranks(rows: list[Hotspot]) -> list[str]:
    """The rank of each of ``rows`` (ranked): rows whose totals' ranges (fastest to slowest
    repetition) overlap, one after another, share the first one's rank, marked '=' ("2=");
    untimed rows have '-'."""
    found: list[str] = []
    first = 0
    for number, row in enumerate(rows):
        if row.total_us is None:
            found.append("-")
            continue
        if number == 0 or not _overlaps(rows[number - 1], row):
            first = number
        found.append(str(first + 1))
    shared = {rank for rank in found if rank != "-" and found.count(rank) > 1}
    return [rank + "=" if rank in shared else rank for rank in found]


def _overlaps(higher: Hotspot, lower: Hotspot) -> bool:
    """Whether ``lower``'s slowest total reaches ``higher``'s fastest (one repetition: equal)."""
    def low(r):
        return (r.us_min if r.us_min is not None else r.us_per_dispatch) * r.dispatches

    def high(r):
        return (r.us_max if r.us_max is not None else r.us_per_dispatch) * r.dispatches
    return high(lower) >= low(higher)


def shares(rows: list[Hotspot]) -> list[float | None]:
    """Each row's percentage of the timed total."""
    total = sum(r.total_us for r in rows if r.total_us is not None)
    return [None if r.total_us is None or not total else 100 * r.total_us / total for r in rows]


def table(report: Report) -> str:
    rows = ranked(report.rows)
    timed = [r for r in rows if r.total_us is not None]
    header = ("rank", "executable", "export", "dispatches", "us/dispatch", "spread", "total us",
              "share %", "substituted by", "kernel us", "IREE/kernel", "note")
    lines = [header]
    for rank, row, share in zip(ranks(rows), rows, shares(rows)):
        note = "; ".join(filter(None, [row.note, row.kernel_note, *row.where]))
        lines.append((rank, row.executable, row.export, str(row.dispatches),
                      _number(row.us_per_dispatch), _spread(row.spread), _number(row.total_us),
                      _number(share, 1), row.substituted_by or "-", _number(row.kernel_us),
                      f"{row.speedup:.2f}x" if row.speedup else "-", note or "-"))
    total = sum(r.total_us for r in timed)
    with_kernels = sum((r.kernel_us if r.kernel_us else r.us_per_dispatch) * r.dispatches
                       for r in timed)
    counted = max((r.repetitions for r in timed), default=0)
    title = (f"{report.model} on {report.target} ({report.device}): "
             f"{sum(r.dispatches for r in rows)} dispatch sites, {len(rows)} entry points, "
             f"{len(timed)} timed, {total:.2f} us in all with IREE's executables"
             + (f", {with_kernels:.2f} us with the substituted kernels"
                if any(r.kernel_us for r in timed) else "") + "\n"
             "(a dispatch site counts once, in a loop too; times are medians of "
             + (f"{counted} repetitions, spread: half their range; '=': ranks within it"
                if counted > 1 else "1 repetition: no spread, no ties told (IREE_HOTSPOTFLAGS)")
             + "; IREE's executables rank, the kernel's time beside)\n")
    return title + benchmarks.columns(lines)


def _number(value: float | None, digits: int = 2) -> str:
    return f"{value:.{digits}f}" if value is not None else "-"


def _spread(value: float | None) -> str:
    return f"±{value:.1f}%" if value is not None else "-"


# What to_json adds to each row, computed: from_json leaves it out.
_COMPUTED = ("total_us", "share", "rank", "spread", "speedup")


def to_json(report: Report) -> str:
    rows = ranked(report.rows)
    items = [asdict(r) | {"total_us": r.total_us, "share": share, "rank": rank,
                          "spread": r.spread, "speedup": r.speedup}
             for r, share, rank in zip(rows, shares(rows), ranks(rows))]
    return json.dumps({"model": report.model, "target": report.target, "device": report.device,
                       "flags": report.flags, "rows": items}, indent=2) + "\n"


def from_json(text: str) -> Report:
    data = json.loads(text)
    rows = [Hotspot(**{k: v for k, v in item.items() if k not in _COMPUTED})
            for item in data["rows"]]
    return Report(data["model"], data["target"], data["device"], rows, data.get("flags", ""))


def plot(report: Report, path: Path, top: int = 25) -> bool:
    """Where the time goes, as a Pareto chart of the ``top`` timed rows: each one's share of
    the total (IREE's executable; beside it, the substituted kernel's time as a share of the
    same total) and the cumulative share. False where matplotlib is missing."""
    plt = benchmarks.pyplot()
    if plt is None:
        return False
    timed = [r for r in ranked(report.rows) if r.total_us is not None]
    total = sum(r.total_us for r in timed) or 1.0
    rows = timed[:top]
    figure, axes = plt.subplots(figsize=(max(6.0, 0.42 * len(rows) + 2.5), 4.8))
    positions = list(range(len(rows)))
    iree = [100 * r.total_us / total for r in rows]
    # The repetitions' range, as error bars (none where one repetition was timed).
    low = [100 * (r.us_per_dispatch - (r.us_min if r.us_min is not None else r.us_per_dispatch))
           * r.dispatches / total for r in rows]
    high = [100 * ((r.us_max if r.us_max is not None else r.us_per_dispatch) - r.us_per_dispatch)
            * r.dispatches / total for r in rows]
    axes.bar([p - 0.2 for p in positions], iree, 0.4, yerr=[low, high], capsize=2,
             color="tab:blue", label="IREE's executable (bars: fastest to slowest repetition)")
    kernels = [(p, 100 * r.kernel_us * r.dispatches / total)
               for p, r in zip(positions, rows) if r.kernel_us]
    if kernels:
        axes.bar([p + 0.2 for p, _ in kernels], [s for _, s in kernels], 0.4,
                 color="tab:green", label="substituted kernel")
    cumulative, running = [], 0.0
    for share in iree:
        running += share
        cumulative.append(running)
    axes.plot(positions, cumulative, color="tab:red", marker="o", markersize=3,
              label="cumulative share (IREE's)")
    axes.set_ylim(0, 100)
    axes.set_ylabel("% of the timed total per program run")
    names = [f"{rank} {r.export}{'*' if r.substituted_by else ''}"
             for rank, r in zip(ranks(timed), rows)]
    axes.set_xticks(positions, names, rotation=60, ha="right", fontsize=6)
    axes.legend(fontsize=7, loc="center right")
    shown = "" if len(rows) == len(timed) else f", the first {len(rows)} of {len(timed)}"
    axes.set_title(f"{report.model} on {report.target} ({report.device}): "
                   f"{total:.1f} us in all{shown}; * substituted", fontsize=9)
    benchmarks.save_figure(figure, path)
    return True


NO_PLOT = ("no picture: matplotlib is missing (pip install matplotlib, or the extra: "
           "iree-kernels[plots])")


def write(report: Report, text_path: Path) -> tuple[str, bool]:
    """The report as text, JSON and PNG beside ``text_path``; the text, and whether the PNG was
    drawn (where matplotlib is missing there is none, and an older one is removed)."""
    text = table(report)
    write_atomically(text_path, text)
    write_atomically(text_path.with_suffix(".json"), to_json(report))
    png = text_path.with_suffix(".png")
    plotted = plot(report, png)
    if not plotted and png.exists():
        png.unlink()
    return text, plotted
