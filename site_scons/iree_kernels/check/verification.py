"""Per-executable differential checks: IREE's executable and its substitute, run on the same bytes.

The plan of one substitution's check (``<key>.verify.json``: the harness's
cases, the tensors of each, the two compiled modules, the tolerance and the
seed), made from IREE's benchmark dump (``harnesses``), and running it: both
modules on the same seeded buffer, the results compared
(``dispatch_buffers``); ``python -m iree_kernels.check.verification`` runs
plans built on another machine.

This module runs iree-run-module through ``toolchains.run``; it declares no
build steps.

Not for: rewriting IREE's benchmark module (``harness``), filling and
comparing the buffers (``dispatch_buffers``).
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from iree_kernels.core import toolchains
from iree_kernels.check.benchmarks import with_source
from iree_kernels.check.comparison import Tolerance
from iree_kernels.check.dispatch_buffers import (Region, binding_elements, compare, random_input,
                                                regions)
from iree_kernels.check.harness import Case, harness, sites_by_function
from iree_kernels.core.errors import UserError

FORMAT = 1
SEED = 0


@dataclass
class Plan:
    """What the differential check of one substitution runs: written as ``<key>.verify.json``."""
    model: str
    target: str
    executable: str
    kernel: str                            # the kernel file, as the manifest names it
    tolerance: dict                        # atol, rtol, ulp (None: the default)
    note: str = ""                         # why there is nothing to run, where there is not
    cases: list[dict] = field(default_factory=list)   # Case's fields, and regions
    iree_module: str = ""
    kernel_module: str = ""
    seed: int = SEED
    shapes: str = ""                       # where dynamic shapes were taken from
    format: int = FORMAT


def harnesses(dumped: dict[str, tuple[Path, str]], program_text: str, program: str,
              names: list[str]) -> dict[str, dict]:
    """Per executable of ``names``: {"harness": MLIR text, "cases": [...], "shapes": ...} or {"note": why none}.

    ``dumped``: the benchmark module IREE dumped for each executable, and where
    its shapes are from (``benchmarks.dump_benchmarks_of``); ``program_text``: the
    executable-sources program, whose executables (IREE's own, before codegen)
    go into the harnesses.
    """
    from iree_kernels.ir.executables import read_executables
    from iree_kernels.ir.program import Program

    found = read_executables(program_text, program)
    out = {}
    with Program(program_text, program) as sources:
        sites = sources.dispatch_sites()
        for name in names:
            if name not in dumped:
                out[name] = {"note": "IREE dumps no benchmark for it (dynamic shapes or "
                                     "push constants computed at run time)"}
                continue
            bench, shapes = dumped[name]
            text = with_source(bench, sources, name)
            text, cases = harness(text, str(bench), sites_by_function(text, sites.get(name, [])))
            subspans = found[name].subspans
            out[name] = {"harness": text, "shapes": shapes, "cases": []}
            for c in cases:
                c.elements = binding_elements(subspans, len(c.bindings))
                out[name]["cases"].append({**asdict(c), "regions": [
                    asdict(r) for r in regions(c, subspans)]})
    return out


def count_error(expressions, workloads: list, where: str) -> str:
    """Why a wrapped kernel's ``workgroup_count`` cannot launch at some dispatch site (0
    workgroups, or 2^32 and more: a workload-dependent expression that only the sites' workloads
    show), or ''. ``workloads``: each site's (None where not known)."""
    from iree_kernels.ir.workgroups import COUNT_LIMIT, evaluate
    for number, workload in enumerate(workloads, 1):
        if workload is None or None in workload:
            continue
        counts = evaluate(expressions, tuple(workload))
        if any(not 0 < count < COUNT_LIMIT for count in counts):
            given = ", ".join(f"w{i} = {w}" for i, w in enumerate(workload)) or "none"
            return (f"{where}: workgroup_count {list(expressions)} is {counts} at dispatch "
                    f"site {number} (workload {given}): each count must be 1 to 2^32 - 1")
    return ""


def run(plan: Plan, run_module: str, device: str, work: Path,
        timeouts: toolchains.Timeouts | None = None, runner=None) -> str | None:
    """Run both modules of ``plan`` on ``device`` and compare; why they differ, or None.

    ``runner(argv, *, reads, writes, file, doing, timeouts)`` runs each module (default:
    here); ``reads`` and ``writes`` are the files the run reads and writes (a build runs it
    on a worker with the device, ``iree_kernels.scons.remote.device_runner``)."""
    runner = runner or _run_here
    tolerance = Tolerance(**plan.tolerance)
    work.mkdir(parents=True, exist_ok=True)
    for number, case in enumerate(plan.cases):
        c = Case(case["function"], [tuple(b) for b in case["bindings"]],
                 tuple(case.get("constants", ())), case.get("site", ""),
                 tuple(case.get("elements", ())))
        tensors = [Region(**{**r, "shape": tuple(r["shape"])}) for r in case["regions"]]
        start = random_input(c, tensors, plan.seed + number)
        given = work / f"{number}.input.npy"
        np.save(given, start)
        outputs = {}
        for who, module in (("iree", plan.iree_module), ("kernel", plan.kernel_module)):
            written = work / f"{number}.{who}.npy"
            runner([run_module, f"--module={module}", f"--device={device}",
                    f"--function={c.function}", f"--input=@{given}", f"--output=@{written}"],
                   reads=[module, given], writes=[written], file=module,
                   doing=f"run the differential check of {plan.executable}", timeouts=timeouts)
            outputs[who] = np.load(written).reshape(-1).view(np.uint8)
        wrong = compare(c, tensors, start, outputs["iree"], outputs["kernel"], tolerance)
        if wrong:
            if c.site:
                return f"at {c.site}: {wrong}"
            shown_case = f" (dispatch {number + 1} of {len(plan.cases)})" if len(plan.cases) > 1 else ""
            return f"{wrong}{shown_case}"
    return None


def _run_here(argv: list[str], *, reads, writes, **given) -> str:
    return toolchains.run(argv, **given)


def to_json(plan: Plan) -> str:
    return json.dumps(asdict(plan), indent=1, sort_keys=True) + "\n"


def from_json(text: str, source: str) -> Plan:
    try:
        data = json.loads(text)
        if data.get("format") != FORMAT:
            raise ValueError(f"format {data.get('format')}, this library reads {FORMAT}")
        return Plan(**data)
    except (ValueError, TypeError) as e:
        raise UserError(f"is not a differential-check plan this library reads: {e}",
                        file=source) from None


def describe(plan: Plan) -> str:
    shapes = f", {plan.shapes}" if plan.shapes else ""
    return (f"{plan.model}/{plan.target} {plan.executable} ({plan.kernel}, "
            f"{Tolerance(**plan.tolerance).describe()}{shapes})")


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.check.verification PLAN.verify.json...: run differential checks built elsewhere.

    For a machine with the device but without the compiler: carry build/ there.
    """
    import argparse
    import tempfile
    parser = argparse.ArgumentParser(description=main.__doc__.splitlines()[0])
    parser.add_argument("plans", nargs="+")
    parser.add_argument("--device", required=True, help="e.g. cuda, vulkan, local-task")
    args = parser.parse_args(argv)
    program = toolchains.iree_tool("iree-run-module") or "iree-run-module"
    failed = 0
    for path in args.plans:
        what = path
        try:
            plan = from_json(Path(path).read_text(), path)
            what = describe(plan)
            if plan.note:
                print(f"skipped {what}: {plan.note}")
                continue
            with tempfile.TemporaryDirectory() as work:
                wrong = run(plan, program, args.device, Path(work))
        except (OSError, UserError) as e:
            wrong = str(e)
        failed += wrong is not None
        print(f"{'FAILED' if wrong else 'matched'} {what}" + (f": {wrong}" if wrong else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
