"""iree_kernels.ir.listing: executables.json reads back as the executables MLIR gives."""
from __future__ import annotations

import json

import pytest

from iree_kernels.ir import listing
from iree_kernels.ir import fingerprints
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import read_executables
from test_scaffold import DYNAMIC, MAX_POOL


@pytest.mark.parametrize("program", [MAX_POOL, DYNAMIC], ids=["static", "dynamic"])
def test_a_listing_reads_back_as_the_executables_and_fingerprints_of_its_program(program):
    written = listing.dumps(listing.of_program(program, "ops.mlir"))
    read = listing.loads(written, "executables.json")
    assert read.executables == read_executables(program)
    assert read.fingerprints == fingerprints.fingerprints(program)
    subspans = [s for e in read.executables.values() for s in e.subspans]
    # What the checks compute from: offsets from push constants still evaluate.
    assert [s.offset_at((0, 0, 64, 0)) for s in subspans] == \
        [s.offset_at((0, 0, 64, 0)) for e in read_executables(program).values()
         for s in e.subspans]


def test_the_dynamic_fixture_has_an_offset_computed_from_push_constants():
    executable, = read_executables(DYNAMIC).values()
    assert any(s.offset_expression for s in executable.subspans)


@pytest.mark.parametrize("text", ["{", '{"format": 0}', '{"format": 1, "executables": []}',
                                  json.dumps({"format": 1, "executables": {"e": {}},
                                              "fingerprints": {}})])
def test_a_listing_this_build_did_not_write_is_an_error_naming_it(text):
    with pytest.raises(UserError, match="executables.json.*not a listing of executables"):
        listing.loads(text, "build/vulkan/m/executables.json")
