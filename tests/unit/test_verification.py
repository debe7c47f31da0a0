"""iree_kernels.check's harness, dispatch_buffers and verification: harnesses from IREE's
benchmark dumps, and what a comparison reports."""
from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import DATA
from iree_kernels.check import dispatch_buffers, harness, verification
from iree_kernels.check.comparison import Tolerance
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Subspan, read_executables
from iree_kernels.check.dispatch_buffers import Region
from iree_kernels.check.harness import Case

BENCHMARK = (DATA / "benchmarks/mlp_dispatch_0.mlir").read_text()   # IREE 3.13's own dump


def test_harness_dispatches_once_on_the_buffer_it_is_given_and_returns_it():
    text, cases = harness.harness(BENCHMARK, "bench.mlir")
    case, = cases
    assert case.function == "main_dispatch_0_embedded_elf_x86_64_main_dispatch_0_matmul_4x16x8_f32"
    assert case.bindings == [(0, 128), (256, 512), (768, 256)]
    assert case.size == 1024
    function = text[text.index(f"util.func public @{case.function}"):]
    assert function.startswith(f"util.func public @{case.function}(%iree_kernels_verify_input: "
                               "!hal.buffer_view) -> !hal.buffer_view attributes")
    assert "util.global.load" not in function and "%arg0" not in function.split("{", 1)[0]
    assert "hal.buffer_view.buffer<%iree_kernels_verify_input : !hal.buffer_view>" in function
    assert "= arith.constant 1 : index" in function
    assert "util.return %iree_kernels_verify_input : !hal.buffer_view" in function
    from iree.compiler import ir
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        ir.Module.parse(text)               # still MLIR


def test_a_benchmark_in_another_form_is_refused_naming_the_function():
    changed = BENCHMARK.replace("util.global.load", "util.global.load_other")
    with pytest.raises(UserError, match=r"bench\.mlir: .*matmul_4x16x8_f32' is not in the form"):
        harness.harness(changed, "bench.mlir")
    with pytest.raises(UserError, match="no benchmark function"):
        harness.harness("module {\n}\n", "bench.mlir")


def test_subspans_give_offset_type_shape_and_access():
    pool, = read_executables((DATA / "executables/squeezenet_max_pool.mlir").read_text()).values()
    assert pool.subspans == (
        Subspan(0, 0, "readonly", "f32", (64, 111, 111)),
        Subspan(1, 3154176, "writeonly", "f32", (64, 55, 55)))
    matmul, = read_executables(
        (DATA / "executables/layers_dynamic_matmul.mlir").read_text()).values()
    dynamic = [s for s in matmul.subspans if s.binding == 3][0]
    assert dynamic == Subspan(3, "from push constants 2, 3", "writeonly", "f32", (None, 24),
                              (((4, 5), 0),))
    assert dynamic.dynamic


CASE = Case("f", [(0, 64), (64, 64)])
TENSORS = [Region(0, 0, "f32", (4, 4), "readonly"), Region(1, 80, "f32", (2, 4), "writeonly")]


def _buffers():
    start = dispatch_buffers.random_input(CASE, TENSORS, seed=3)
    iree = start.copy()
    iree[80:112] = np.arange(8, dtype="<f4").view(np.uint8)
    return start, iree


def test_the_same_seed_gives_the_same_input_and_tensors_get_values_of_their_type():
    start = dispatch_buffers.random_input(CASE, TENSORS, seed=3)
    assert np.array_equal(start, dispatch_buffers.random_input(CASE, TENSORS, seed=3))
    assert not np.array_equal(start, dispatch_buffers.random_input(CASE, TENSORS, seed=4))
    values = start[0:64].view("<f4")
    assert np.all(np.abs(values) <= 1.0)


def test_equal_buffers_match_and_differences_are_placed_in_their_binding():
    start, iree = _buffers()
    assert dispatch_buffers.compare(CASE, TENSORS, start, iree, iree.copy(),
                                    Tolerance(ulp=0)) is None

    kernel = iree.copy()
    kernel[84:88] = np.array([1.0000001], dtype="<f4").view(np.uint8)
    wrong = dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance(ulp=0))
    assert wrong.startswith("binding 1 (output 2x4xf32 at byte 16): element [0, 1] is "
                            "1.0000001192092896, expected 1.0 (difference 1.1920928955078125e-07, "
                            "1 ulp)")
    assert dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance()) is None


def test_unwritten_outputs_inputs_written_and_stray_bytes_are_named():
    start, iree = _buffers()
    kernel = iree.copy()
    kernel[96:112] = start[96:112]
    assert dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance()).endswith(
        "4 of 8 elements still hold their input value: the kernel did not write them "
        "(a launch grid that covers part of the output?)")

    kernel = start.copy()                          # the output written at its binding's start
    kernel[64:96] = iree[80:112]
    assert re.search(r"the kernel did not write them; instead it wrote 1[56] bytes of binding 1 "
                     r"outside every tensor, from byte 0 \(does it ignore the byte offset 16\?\)$",
                     dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance()))

    kernel = iree.copy()
    kernel[8] ^= 0x40
    assert dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance()).startswith(
        "binding 0 (input (read-only) 4x4xf32 at byte 0): element [0, 2]")

    kernel = iree.copy()
    kernel[70] ^= 1
    assert dispatch_buffers.compare(CASE, TENSORS, start, iree, kernel, Tolerance()) == (
        "1 bytes outside the executable's tensors differ, first at binding 1 byte 6: "
        "the kernel writes where IREE's executable does not")


def test_regions_leave_out_tensors_past_their_binding_or_at_offsets_known_at_run_time():
    found = dispatch_buffers.regions(CASE, (
        Subspan(1, 16, "writeonly", "f32", (2, 4)), Subspan(1, 48, "writeonly", "f32", (2, 4)),
        Subspan(0, "from push constants", "readonly", "f32", (4,)),
        Subspan(0, 0, "readonly", "f32", (None, 4))))
    assert found == [Region(1, 80, "f32", (2, 4), "writeonly")]


def test_a_dynamic_tensor_alone_in_its_binding_fills_it_flattened():
    found = dispatch_buffers.regions(CASE, (Subspan(0, 0, "readonly", "f32", (None,)),
                                            Subspan(1, 8, "writeonly", "i32", (None, 2))))
    assert found == [Region(0, 0, "f32", (16,), "readonly"), Region(1, 72, "i32", (14,), "writeonly")]


def test_a_plan_round_trips_and_another_format_is_refused():
    plan = verification.Plan("m", "llvm-cpu", "e", "k.mlir", {"atol": None, "rtol": None, "ulp": 0},
                             cases=[{"function": "f", "bindings": [[0, 4]], "regions": []}])
    assert verification.from_json(verification.to_json(plan), "p.json") == plan
    with pytest.raises(UserError, match="p.json: is not a differential-check plan"):
        verification.from_json('{"format": 99}', "p.json")
    assert verification.describe(plan) == "m/llvm-cpu e (k.mlir, exact)"


def test_every_float_of_a_binding_is_finite_also_around_its_tensors():
    case = Case("f", [(0, 4096), (4096, 256)], elements=("f32", "i32"))
    start = dispatch_buffers.random_input(case, [Region(0, 1024, "f32", (16,), "readonly")], seed=1)
    floats = start[:4096].view("<f4")
    assert np.isfinite(floats).all() and np.abs(floats).max() <= 1.0 and floats.std() > 0.3
    assert set(start[4096:].view("<i4").tolist()) <= set(range(8))
    raw = dispatch_buffers.random_input(Case("f", [(0, 4096)], elements=("",)), [], seed=1)
    assert not np.isfinite(raw.view("<f4")).all()       # bytes of no known type stay random


LAYERS = (DATA / "benchmarks/layers_dispatch_0.mlir").read_text()  # IREE 3.13: 3 sites, 1 dumped


def _site(number, constants, lengths):
    from iree_kernels.ir.program import DispatchSite
    return DispatchSite("main_dispatch_0", "main_dispatch_0_matmul_16x16x16_f32", "main", number,
                        (), constants, tuple(f"{c} : i32" for c in constants), lengths)


def test_an_executable_dispatched_at_several_sites_gets_a_function_per_site():
    function = "main_dispatch_0_embedded_elf_x86_64_main_dispatch_0_matmul_16x16x16_f32"
    _, (dumped,) = harness.harness(LAYERS, "bench.mlir")
    assert dumped.constants == (1024, 0)           # IREE's dump keeps the last site's
    sites = [_site(1, (0, 0), (1024, 1024, 2048)), _site(2, (0, 1024), (2048, 1024, 2048)),
             _site(3, (1024, 0), (2048, 1024, 1024)), _site(4, (0, 1024), (2048, 1024, 2048))]
    text, cases = harness.harness(LAYERS, "bench.mlir", {function: sites})
    assert [c.function for c in cases] == [f"{function}_site{n}" for n in (1, 2, 3)]
    assert cases[1].bindings == [(0, 2048), (2048, 1024), (3072, 2048)]   # packed at 256 bytes
    assert cases[1].site == "dispatch site 2 of 4 (in @main, push constants 0, 1024)"
    second = text[text.index(f"@{function}_site2("):text.index(f"@{function}_site3(")]
    assert "%iree_kernels_site_c1 = arith.constant 1024 : i32" in second
    assert "constants([%iree_kernels_site_c0, %iree_kernels_site_c1])" in second
    assert "[%iree_kernels_site_b2_at, %iree_kernels_site_b2_length]" in second
    assert "%iree_kernels_site_b2_at = arith.constant 3072 : index" in second
    from iree.compiler import ir
    with ir.Context() as context:
        context.allow_unregistered_dialects = True
        ir.Module.parse(text)

    subspans = (Subspan(0, "from push constant 0", "readonly", "f32", (16, 16),
                        offset_expression=("push", 0)),
                Subspan(2, "from push constant 1", "writeonly", "f32", (16, 16),
                        offset_expression=("push", 1)))
    assert [(r.binding, r.start) for r in dispatch_buffers.regions(cases[1], subspans)] == \
        [(0, 0), (2, 3072 + 1024)]
    assert [(r.binding, r.start) for r in dispatch_buffers.regions(cases[2], subspans)] == \
        [(0, 1024), (2, 3072)]


def test_offsets_are_computed_from_the_push_constants_they_are_made_of():
    from iree_kernels.ir.executables import evaluate
    wide = ("arith.ori", ("push", 0), ("arith.shli", ("push", 1), ("constant", 32)))
    assert evaluate(wide, (16, 1)) == 16 + (1 << 32)
    assert evaluate(("push", 0), (-4,)) == 0xFFFFFFFC              # a 32-bit word
    assert evaluate(("arith.addi", ("push", 2), ("constant", 64)), (0, 0)) is None
    assert Subspan(0, "from push constant 0", "readonly", "f32", (4,)).offset_at((4,)) is None


def test_what_iree_writes_outside_the_tensors_it_places_is_output_compared_with_the_tolerance():
    case = Case("f", [(0, 64), (64, 64)], elements=("f32", "f32"))
    inputs = [Region(0, 0, "f32", (4, 4), "readonly")]          # the output's offset unknown
    start = dispatch_buffers.random_input(case, inputs, seed=2)
    iree = start.copy()
    iree[80:112] = np.arange(8, dtype="<f4").view(np.uint8)
    close = iree.copy()
    close[84:88] = np.array([1.0000001], "<f4").view(np.uint8)
    assert dispatch_buffers.compare(case, inputs, start, iree, close, Tolerance()) is None
    nans = [iree.copy() for _ in range(2)]
    nans[0][80:84] = np.array([0x7FC00000], "<u4").view(np.uint8)
    nans[1][80:84] = np.array([0xFFC00123], "<u4").view(np.uint8)
    assert dispatch_buffers.compare(case, inputs, start, nans[0], nans[1], Tolerance()) is None
    wrong = dispatch_buffers.compare(case, inputs, start, iree, close, Tolerance(ulp=0))
    assert wrong.startswith("binding 1 (what IREE's executable writes outside the tensors this "
                            "check could place, as f32): the f32 at byte 20 is 1.0000001192092896, "
                            "expected 1.0"), wrong
    stray = iree.copy()
    stray[120] ^= 1                                              # where IREE wrote nothing
    assert dispatch_buffers.compare(case, inputs, start, iree, stray, Tolerance()).endswith(
        "the kernel writes where IREE's executable does not")


def test_a_count_that_cannot_launch_at_a_sites_workload_is_named_with_the_site():
    from iree_kernels.check.verification import count_error
    always_wraps = ["ceildiv(w0, 1024) - ceildiv(w0, 1024) - 1"]
    assert count_error(always_wraps, [[None], [5000]], "k.toml:3: [[substitutions]] #1") == (
        "k.toml:3: [[substitutions]] #1: workgroup_count ['ceildiv(w0, 1024) - ceildiv(w0, "
        "1024) - 1'] is [18446744073709551615, 1, 1] at dispatch site 2 (workload w0 = 5000): "
        "each count must be 1 to 2^32 - 1")
    assert "is [0, 1, 1] at dispatch site 1" in count_error(["w0 // 8"], [[4]], "k")
    assert count_error(["ceildiv(w0, 1024)"], [[5000], [None]], "k") == ""
