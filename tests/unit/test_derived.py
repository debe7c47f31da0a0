"""Derived kernels: iree-opt pipelines run on a dumped executable, the result checked to be it."""
from __future__ import annotations

import pytest

from conftest import DATA
from iree_kernels.module import derived
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import read_executables
from iree_kernels.project.records import Origin, Substitution

POOL = (DATA / "executables/squeezenet_max_pool.mlir").read_text()
NAME = "squeezenet$async_dispatch_1"
INNER = "builtin.module(hal.executable(hal.executable.variant(builtin.module(func.func({})))))"


def sub(*passes: str) -> Substitution:
    return Substitution("m", "vulkan", NAME, "", "source",
                        Origin("kernels/demo.toml", 5, "[[substitutions]] #1", {"passes": 9}),
                        passes=passes)


@pytest.fixture
def dumped(tmp_path):
    path = tmp_path / "k.dumped.mlir"
    path.write_text(POOL)
    return path


def derive(dumped, *passes: str) -> str:
    original = read_executables(POOL)[NAME]
    program = derived.iree_opt()
    if program is None:
        pytest.skip("no iree-opt")
    return derived.derive_in_folder(program, [], sub(*passes), POOL, original, str(dumped))


def test_pipelines_run_in_order_and_keep_the_executable(dumped):
    made = derive(dumped, INNER.format("canonicalize"), INNER.format("cse"))
    (name,) = read_executables(made)
    assert name == NAME and made != POOL


def test_a_failing_pipeline_is_one_line_naming_the_entry_and_iree_opts_first_error(dumped):
    with pytest.raises(UserError) as e:
        derive(dumped, INNER.format("canonicalize"), INNER.format("no-such-pass"))
    assert str(e.value) == (
        "kernels/demo.toml:9: [[substitutions]] #1: field 'passes': iree-opt pipeline "
        f"'{INNER.format('no-such-pass')}' fails on executable '{NAME}': error: MLIR Textual "
        "PassPipeline Parser:1:64: error: 'no-such-pass' does not refer to a registered pass "
        "or pass pipeline")


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace(f"@{NAME} ", "@other "), "must leave one hal.executable "
     f"@{NAME}; they left @other"),
    (lambda t: t.replace('#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, ', "", 1),
     "changed executable 'squeezenet$async_dispatch_1''s exports or layouts: "
     "squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32 (2 bindings [0:ro, 1:rw], 0 push "
     "constants) became"),
    (lambda t: "hal.executable @", "the pipelines' output does not parse"),
])
def test_the_result_must_be_the_executable_it_replaces(edit, expected):
    with pytest.raises(UserError) as e:
        derived.check_derived(edit(POOL), sub("x()"), read_executables(POOL)[NAME])
    assert expected in str(e.value) and "\n" not in str(e.value)
