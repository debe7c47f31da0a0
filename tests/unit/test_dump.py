"""The listing 'scons dump' writes: what a kernel replacing each executable must accept."""
from __future__ import annotations

import pytest

from iree_kernels.ir import dump
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import read_executables
from test_scaffold import DYNAMIC, MAX_POOL


def test_the_listing_gives_each_bindings_tensor_access_and_byte_offset():
    pool, = read_executables(MAX_POOL).values()
    text = dump.listing("squeezenet", "vulkan", {pool.name: pool}, {pool.name: pool})
    assert f"{pool.name}\n  export          {pool.export.name}" in text
    assert "binding 0       read-only  readonly 64x111x111xf32 at byte offset 0" in text
    assert "binding 1       read-write writeonly 64x55x55xf32 at byte offset 3154176" in text


def test_the_listing_names_dynamic_sizes_by_their_push_constants():
    matmul, = read_executables(DYNAMIC).values()
    text = dump.listing("layers", "vulkan", {matmul.name: matmul}, {matmul.name: matmul})
    assert ("binding 3       read-write writeonly ?(push constants 4, 5 = w0)x24xf32 at a byte "
            "offset from push constants 2, 3") in text


def test_executables_codegen_fails_on_are_listed_from_their_sources_with_the_error():
    pool, = read_executables(MAX_POOL).values()
    text = dump.listing("squeezenet", "cuda", {}, {pool.name: pool},
                        failures={pool.name: "'func.func' op failed to distribute"})
    assert "IREE's cuda codegen fails for 1 of 1" in text
    assert "binding 1       read-write writeonly 64x55x55xf32 at byte offset 3154176" in text
    assert "codegen fails   IREE's cuda codegen: 'func.func' op failed to distribute" in text
    assert "workgroup size" not in text


def test_dumped_sources_are_public_and_keep_names_that_need_quoting(tmp_path):
    program = ('module {\n  hal.executable private @"net-v2$async_dispatch_0" {\n  }\n'
               '  hal.executable private @main_dispatch_1 {\n  }\n}\n')
    dump.write_sources(program, "executables.mlir", tmp_path)
    assert (tmp_path / "module_net-v2$async_dispatch_0.mlir").read_text() == \
        'hal.executable public @"net-v2$async_dispatch_0" {\n}\n'
    assert (tmp_path / "module_main_dispatch_1.mlir").read_text() == \
        "hal.executable public @main_dispatch_1 {\n}\n"


def test_dump_kinds_are_a_comma_list_of_known_kinds():
    assert dump.parse_kinds(" sources, binaries ,,") == ["sources", "binaries"]
    assert dump.parse_kinds("") == []
    with pytest.raises(UserError, match="^DUMP: unknown kind 'binary'; kinds: sources, "
                                        "configurations, binaries, benchmarks$"):
        dump.parse_kinds("sources,binary")


def test_each_kind_is_dumped_by_the_run_that_writes_it(tmp_path):
    kinds = ["sources", "configurations", "binaries", "benchmarks"]
    assert dump.dump_flags(kinds, tmp_path, translation=True) == [
        f"--iree-hal-dump-executable-configurations-to={tmp_path}/configurations"]
    assert dump.dump_flags(kinds, tmp_path, translation=False) == [
        f"--iree-hal-dump-executable-binaries-to={tmp_path}/binaries",
        f"--iree-hal-dump-executable-benchmarks-to={tmp_path}/benchmarks"]
    assert dump.dump_flags(["sources"], tmp_path, translation=True) == []


def test_count_region_arguments_are_named_as_the_manifest_names_them():
    assert dump.workload_names("%0 = affine.apply #map()[%arg1, %arg2]\n%arg0") == \
        "%0 = affine.apply #map()[w0, w1]\n%device"
    assert dump.workload_names("%arg12") == "w11"
