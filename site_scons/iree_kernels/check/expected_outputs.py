"""Expected outputs kept next to a model, and running a built module against them.

A model's ``<name>.expected.toml`` lists cases: a function, its inputs and the
outputs it must produce, in iree-run-module's ``--input`` syntax, and how close
(``atol``, ``rtol``, ``ulp``; 0 is exact). The module runs under
iree-run-module, which writes what it computed to .npy; the comparison is
``comparison``'s, so a mismatch is said in full precision. This module does
not decide which targets can run here: see ``runtime``.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path


from iree_kernels.core import processes, toml_files, toolchains
from iree_kernels.core.files import scratch_folder
from iree_kernels.project.tolerances import TOLERANCE_KEYS, Tolerance, tolerance_error
from iree_kernels.core.errors import UserError, closest, control_character, shown
from iree_kernels.project.repo_paths import repo_path
from iree_kernels.ir.targets import TARGETS

CASE_KEYS = {"function", "inputs", "outputs", "targets", *TOLERANCE_KEYS}


@dataclass(frozen=True)
class Case:
    function: str
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    targets: tuple[str, ...] | None
    atol: float | None
    rtol: float | None
    entry: str
    ulp: int | None = None
    bitwise: bool | None = None

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.atol, self.rtol, self.ulp, bool(self.bitwise))

    def argv(self, run_module: str, module: str, device: str, outputs: str) -> list[str]:
        """iree-run-module computing the case, its results written to the .npy ``outputs``."""
        argv = [run_module, f"--module={module}", f"--device={device}",
                f"--function={self.function}"]
        argv += [f"--input={i}" for i in self.inputs]
        argv += [f"--output={'@' if n == 0 else '+'}{outputs}" for n in range(len(self.outputs))]
        return argv


def load_cases(path: str, target: str | None = None, root: str | Path | None = None,
               build_dir: str = "build") -> list[Case]:
    """The cases in ``path``; with ``target``, only those that apply to it.

    With ``root`` (the repo), every ``@file`` an input or output names must be
    a regular file inside it and outside ``build_dir``.
    """
    _, data = toml_files.read(path, path, "expected-outputs file")
    unknown = set(data) - {"case"}
    if unknown:
        raise UserError(f"unknown key '{sorted(unknown)[0]}'; an expected-outputs file holds "
                        "[[case]] entries", file=path)
    cases = []
    for index, entry in enumerate(data.get("case", [])):
        name = f"[[case]] #{index + 1}"
        for key in entry:
            if key not in CASE_KEYS:
                raise UserError(f"unknown field '{key}'{closest(key, CASE_KEYS)}", file=path, entry=name)
        for key in ("function", "outputs"):
            if key not in entry:
                raise UserError("missing required field", file=path, entry=name, field=key)
        for key in ("inputs", "outputs", "targets"):
            value = entry.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UserError("must be a list of strings", file=path, entry=name, field=key)
        if not isinstance(entry["function"], str):
            raise UserError("must be a string", file=path, entry=name, field="function")
        for key in ("function", "inputs", "outputs", "targets"):
            for value in ([entry[key]] if key == "function" else entry.get(key, [])):
                if control_character(value):
                    raise UserError(f"'{shown(value)}' contains the control character "
                                    f"{control_character(value)!r}", file=path, entry=name,
                                    field=key)
                if root is not None and key in ("inputs", "outputs") and value.startswith("@"):
                    try:
                        repo_path(Path(root).resolve(), value[1:], build_dir)
                    except ValueError as e:
                        raise UserError(f"'{value}': {e}", file=path, entry=name,
                                        field=key) from None
        for t in entry.get("targets", []):
            if t not in TARGETS:
                raise UserError(f"unknown target '{shown(t)}'{closest(t, TARGETS)}; known "
                                f"targets: {', '.join(TARGETS)}", file=path, entry=name,
                                field="targets")
        targets = tuple(entry["targets"]) if "targets" in entry else None
        if target is not None and targets is not None and target not in targets:
            continue
        for key in TOLERANCE_KEYS:
            if problem := tolerance_error(key, entry.get(key)):
                raise UserError(problem, file=path, entry=name, field=key)
        cases.append(Case(entry["function"], tuple(entry.get("inputs", [])),
                          tuple(entry["outputs"]), targets, entry.get("atol"),
                          entry.get("rtol"), name, entry.get("ulp"), entry.get("bitwise")))
    return cases


def input_shapes(case: Case, root: str | Path = ".") -> list[tuple[int, ...]]:
    """The shape of each of ``case``'s inputs (a ``@file.npy`` is read for its header only)."""
    import numpy as np                  # here: reading cases (every build) does not need it
    from iree_kernels.check.comparison import parse_value
    shapes = []
    for value in case.inputs:
        try:
            if value.startswith("@"):
                shapes.append(tuple(np.load(Path(root) / value[1:], mmap_mode="r").shape))
            else:
                shapes.append(tuple(parse_value(value).shape))
        except (OSError, ValueError) as e:
            raise UserError(f"input '{value[:60]}': {e}", entry=case.entry) from None
    return shapes


def case_shapes(path: str | None, target: str) -> list[tuple[str, list, str]]:
    """(function, input shapes, a name for them) of each case of ``path`` for ``target``."""
    if not path:
        return []
    return [(case.function, input_shapes(case), f"the input shapes of {case.entry} in {path}")
            for case in load_cases(path, target)]


def _run_here(argv: list[str], *, reads, writes, **given) -> processes.Finished:
    return processes.run(argv, **given)


def referenced_files(cases: list[Case]) -> list[str]:
    """Files the cases read through iree-run-module's ``@path`` syntax."""
    values = [v for case in cases for v in (*case.inputs, *case.outputs)]
    return sorted({v[1:] for v in values if v.startswith("@")})


def run_case(case: Case, run_module: str, module: str, device: str,
             expected_file: str, cwd: str | None = None,
             timeouts: toolchains.Timeouts | None = None, runner=None,
             work_in: str | None = None) -> str:
    """Run one case; return what it matched, or raise naming the first element that differs.

    ``@file`` inputs and outputs are relative to ``cwd`` (the repo root). The
    comparison is ``comparison.mismatch``: exact where the case says 0.
    ``runner(argv, *, reads, writes, limit, cwd)`` runs iree-run-module as ``processes.run``
    does (default: here; a build sends it to a worker with the device); what it writes goes
    in a folder made in ``work_in`` (default: the system's temporary folder).
    """
    import numpy as np
    from iree_kernels.check.comparison import mismatch, parse_value
    where = {"file": expected_file, "entry": case.entry}
    runner = runner or _run_here
    with (scratch_folder(work_in, "check") if work_in else
          tempfile.TemporaryDirectory(prefix="iree-kernels-check-")) as work:
        outputs = os.path.join(work, "outputs.npy")
        argv = case.argv(toolchains.real_program(run_module), module, device, outputs)
        limit = (timeouts or toolchains.default_timeouts()).of("RUN_TIMEOUT")
        try:
            result = runner(argv, reads=[module, *referenced_files([case])], writes=[outputs],
                            limit=limit, cwd=cwd)
        except processes.TimeLimit:
            raise UserError(f"{module} on device '{device}': "
                            + toolchains.timeout_message("iree-run-module", limit, "RUN_TIMEOUT"),
                            **where) from None
        except OSError as e:
            raise UserError(f"cannot run {run_module}: {e.strerror}", file=expected_file) from None
        output = result.stdout + result.stderr
        if result.returncode < 0:
            raise UserError(f"{module} on device '{device}': "
                            + toolchains.crash_message("iree-run-module", -result.returncode)
                            + f" running @{case.function}:\n{output.strip()}", **where)
        if result.returncode != 0:
            raise UserError(f"{module} on device '{device}' does not produce the expected "
                            f"outputs of @{case.function}:\n{output.strip()}", **where)
        with open(outputs, "rb") as f:
            computed = [np.load(f) for _ in case.outputs]
    for n, (actual, text) in enumerate(zip(computed, case.outputs)):
        try:
            expected = parse_value(text, cwd or ".")
        except (ValueError, OSError) as e:
            raise UserError(f"output {n + 1}: {e}", **where) from None
        wrong = mismatch(actual, expected, case.tolerance)
        if wrong:
            raise UserError(f"{module} on device '{device}' does not produce the expected "
                            f"outputs of @{case.function}: result {n}: {wrong}", **where)
    return (f"{module}: @{case.function} gave the {len(case.outputs)} expected output(s) "
            f"({case.tolerance.describe()})\n")


def main(argv: list[str] | None = None) -> int:
    """python -m iree_kernels.check.expected_outputs MODULE EXPECTED TARGET DEVICE: run one module's cases."""
    import sys
    module, expected, target, device = argv if argv is not None else sys.argv[1:]
    run_module = toolchains.iree_tool("iree-run-module") or "iree-run-module"
    try:
        cases = load_cases(expected, target)
        for case in cases:
            run_case(case, run_module, module, device, expected)
    except UserError as e:
        print(f"FAILED: {e}")
        return 1
    print(f"{module}: {len(cases)} case(s) of {expected} matched on {device}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
