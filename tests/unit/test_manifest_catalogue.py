"""The catalogue's mistakes found while the manifests are read, checked on the loader itself.

Each case of tests/bad_inputs.py and tests/hostile_inputs.py named in
``REFUSED_BY_THE_LOADER`` is written as the e2e test writes it, then read with
``load_project`` as ``scons`` reads it (the repo's MANIFESTS glob and BUILD_DIR,
or the case's own): the first line of the error is the line the build prints
after ``scons: ***`` (tests/e2e/test_bad_inputs.py runs a few of them, the
plumbing, with scons). Reading writes nothing, inside the repo or outside, and
runs nothing a string holds.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import bad_inputs
import hostile_inputs
from bad_inputs import PWNED, loader_cases, snapshot, write_repo
from iree_kernels.core.errors import UserError
from iree_kernels.project.manifest import load_project
from iree_kernels.settings import BY_NAME

CASES = loader_cases(bad_inputs.CASES + hostile_inputs.CASES)
SCONS_PREFIX = "scons: *** "


def variables(case) -> dict[str, str]:
    """MANIFESTS and BUILD_DIR as the case's command line sets them, else their defaults."""
    given = dict(a.split("=", 1) for a in case.args if "=" in a)
    return {name: given.get(name, BY_NAME[name].default) for name in ("MANIFESTS", "BUILD_DIR")}


def test_every_case_named_for_the_loader_is_in_the_catalogue_and_asks_nothing_of_the_machine():
    assert {c.id for c in CASES} == bad_inputs.REFUSED_BY_THE_LOADER
    assert len(CASES) >= 70
    for case in CASES:      # what only a scons run would honour
        assert (case.env, case.tools, case.needs, case.code) == ({}, {}, "", 2), case.id
        assert not case.present and not case.shows, case.id


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_the_loader_refuses_with_the_line_the_build_prints(case, tmp_path):
    root = tmp_path / "repo"
    write_repo(root, case)
    before = snapshot(tmp_path, tmp_path / "nothing skipped")
    settings = variables(case)
    with pytest.raises(UserError) as refused:
        load_project(root, sorted(root.glob(settings["MANIFESTS"])), settings["BUILD_DIR"])
    first_line = str(refused.value).splitlines()[0]
    for expected in case.expect if isinstance(case.expect, tuple) else (case.expect,):
        assert expected.removeprefix(SCONS_PREFIX) in first_line, str(refused.value)
    assert snapshot(tmp_path, tmp_path / "nothing skipped") == before
    assert not list(Path(tmp_path).rglob(PWNED)), "a string was run as code"
