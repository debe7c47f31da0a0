"""The catalogue of bad inputs (tests/bad_inputs.py), each run with scons: one clear error, a
non-zero exit and no traceback.

Every case writes a small repo, runs scons, and checks that the first error line
names the file (and line, where there is one) and says what is wrong, the exit
status, that no Python traceback is printed, that nothing the failed build left
is taken as up to date by ``scons --question`` (asked wherever the build made
anything: a mistake found while reading the manifests makes nothing), and that
nothing changed outside the repo. The cases refused while the manifests are
read are checked on the loader (tests/unit/test_manifest_catalogue.py), a few
of them (bad_inputs.PLUMBING) here too.
"""
from __future__ import annotations

import pytest

import bad_inputs
from bad_inputs import MLP_CASE_INPUTS, run_bad_input
from conftest import REPO

CASES = bad_inputs.scons_cases(bad_inputs.CASES)


def test_an_exact_case_passes_only_bit_for_bit(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", '[models.mlp]\nsource = "models/mlp.mlir"\n'
                  'targets = ["llvm-cpu"]\n')
    project.write("models/mlp.expected.toml", '[[case]]\nfunction = "main"\ninputs = ['
                  + ", ".join(f'"{v}"' for v in MLP_CASE_INPUTS)
                  + ']\noutputs = ["4xf32=23 27 26.5 21"]\nulp = 0\n')
    project.scons("check")
    assert "@main gave the 1 expected output(s) (exact)" in project.read("build/llvm-cpu/mlp.check")


def test_catalogue_is_large_enough():
    assert len(bad_inputs.CASES) >= 30


def test_the_plumbing_cases_are_refused_by_the_loader_and_some_run_here():
    every = {c.id for c in bad_inputs.CASES}
    from hostile_inputs import CASES as HOSTILE
    every |= {c.id for c in HOSTILE}
    assert bad_inputs.PLUMBING <= bad_inputs.REFUSED_BY_THE_LOADER <= every
    assert bad_inputs.PLUMBING & {c.id for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_bad_input(project, case, monkeypatch, tmp_path):
    run_bad_input(project, case, monkeypatch, tmp_path)
