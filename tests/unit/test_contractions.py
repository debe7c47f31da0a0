"""The facts of GEMM executables are read off their MLIR, and every other executable says why it has none.

The fixture is the executables of bench/corpus.py's transformer block on
llvm-cpu: its GEMMs carry a scale, a transposed store, a folded bias with a
residual, and a GELU, as IREE fuses them.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from iree_kernels.ir.contractions import read_contractions
from iree_kernels.ir.gemm_facts import Contraction, expression_text
from iree_kernels.kinds.gemm_interface import Unsupported, header

DATA = Path(__file__).parents[1] / "data" / "executables"
BLOCK = DATA / "transformer_block.mlir"
LAYERS = DATA / "layers_dynamic_matmul.mlir"


@pytest.fixture(scope="module")
def block() -> dict:
    return read_contractions(BLOCK.read_text(), str(BLOCK))


def test_every_batch_matmul_of_the_block_is_read_and_the_rest_say_why_not(block):
    taken = {name for name, facts in block.items() if isinstance(facts, Contraction)}
    assert taken == {f"main$async_dispatch_{n}" for n in (2, 8, 10, 11, 14, 15)}
    assert block["main$async_dispatch_9"] == "it holds no linalg matmul op"


def test_sizes_operands_and_offsets_from_push_constants_are_read(block):
    facts = block["main$async_dispatch_2"]
    assert (facts.op, facts.batch, facts.m, facts.n, facts.k) == ("batch_matmul", 1, 16, 64, 64)
    assert (facts.lhs.binding, facts.lhs.offset, facts.lhs.dims) == (0, 4096, ("b", "m", "k"))
    assert (facts.rhs.binding, facts.rhs.offset) == (1, ("push", 0))
    assert (facts.out.binding, facts.out.offset) == (2, ("push", 1))
    assert (facts.constants, facts.bindings, facts.epilogue) == (2, 3, ("acc",))


def test_a_transposed_store_is_the_outputs_dims(block):
    facts = block["main$async_dispatch_10"]
    assert facts.out.dims == ("m", "b", "n") and facts.out.shape == (16, 4, 16)


def test_a_folded_bias_is_a_table_and_a_residual_an_input(block):
    facts = block["main$async_dispatch_11"]
    assert expression_text(facts.epilogue) == "(add input0 (add acc table0))"
    assert facts.inputs[0].dims == ("b", "m", "n")
    (table,) = facts.tables
    assert table.dims == ("n",) and len(table.values) == 64 == table.shape[0]


def test_gelu_reads_as_its_arithmetic(block):
    text = expression_text(block["main$async_dispatch_14"].epilogue)
    assert "(erf (div (add acc input0) 1.4142135" in text


def test_facts_read_back_from_json_as_they_were(block):
    for facts in block.values():
        if isinstance(facts, Contraction):
            assert Contraction.from_dict(json.loads(json.dumps(facts.to_dict()))) == facts


def test_an_executable_whose_sizes_are_dynamic_is_declined():
    found = read_contractions(LAYERS.read_text(), str(LAYERS))
    assert any("dynamic" in why for why in found.values() if isinstance(why, str))


@pytest.mark.skipif(not shutil.which("clang"), reason="no clang")
@pytest.mark.parametrize("number", [2, 8, 10, 11, 14, 15])
def test_each_header_compiles_with_the_family_kernel_and_calls_no_library(block, number,
                                                                           tmp_path):
    name = f"main$async_dispatch_{number}"
    (tmp_path / "iree_gemm.h").write_text(header(
        block[name], executable=name, export=name, model="block", target="llvm-cpu",
        cuda=False))
    kernel = Path(__file__).parents[2] / "kernels" / "families" / "gemm.c"
    subprocess.run(["clang", "-target", "x86_64-unknown-unknown-eabi-elf", "-std=c17", "-O2",
                    "-ffreestanding", "-fPIC", "-Werror", "-I", str(tmp_path), "-c",
                    str(kernel), "-o", str(tmp_path / "gemm.o")], check=True, timeout=60)
    undefined = subprocess.run(["llvm-nm", "-u", str(tmp_path / "gemm.o")] if
                               shutil.which("llvm-nm") else ["nm", "-u", str(tmp_path / "gemm.o")],
                               capture_output=True, text=True, check=True, timeout=60).stdout
    assert undefined.strip() == ""


def test_an_element_type_without_a_c_type_is_unsupported(block):
    facts = block["main$async_dispatch_2"]
    odd = Contraction.from_dict({**facts.to_dict(), "accumulator": "f8E4M3FN"})
    with pytest.raises(Unsupported, match="f8E4M3FN"):
        header(odd, executable="x", export="x", model="m", target="llvm-cpu", cuda=False)


def test_the_cuda_header_has_no_workgroup_parameters_and_uses_cudas_math(block):
    name = "main$async_dispatch_14"
    text = header(block[name], executable=name, export=name, model="m", target="cuda",
                  cuda=True)
    params = re.search(r"#define GEMM_PARAMS (.*)", text).group(1)
    assert params.startswith("char *binding0") and "workgroup" not in params
    assert "#define gemm_erf(x) erff(x)" in text and "#include <stdint.h>" not in text


@pytest.mark.skipif(not shutil.which("nvcc"), reason="no nvcc")
@pytest.mark.parametrize("number", [10, 11, 14])
def test_each_cuda_header_compiles_with_the_cuda_family_kernel_to_its_exports_entry(
        block, number, tmp_path):
    name = f"main$async_dispatch_{number}"
    (tmp_path / "iree_gemm.h").write_text(header(
        block[name], executable=name, export=f"{name}_gemm", model="block", target="cuda",
        cuda=True))
    kernel = Path(__file__).parents[2] / "kernels" / "families" / "gemm.cu"
    subprocess.run(["nvcc", "-ptx", "-arch=sm_80", "-I", str(tmp_path), str(kernel), "-o",
                    str(tmp_path / "gemm.ptx")], check=True, timeout=120)
    assert re.findall(r"\.entry ([^(\s]+)", (tmp_path / "gemm.ptx").read_text()) == \
        [f"{name}_gemm"]


def test_a_triton_entry_finds_operands_at_push_constant_offsets_and_stores_transposed(block):
    from iree_kernels.kinds import triton_family
    plain = triton_family.entry(block["main$async_dispatch_2"], executable="x", export="x",
                                model="m", target="cuda", kernel="kernels/gemm.py",
                                function="gemm", constexprs=["BLOCK_M"])
    assert "def entry(binding0, binding1, binding2, constant0, constant1, BLOCK_M: " \
           "tl.constexpr):" in plain
    assert "binding1 + (constant0.to(tl.int64)) // 4" in plain
    transposed = triton_family.entry(block["main$async_dispatch_10"], executable="x",
                                     export="x", model="m", target="cuda",
                                     kernel="kernels/gemm.py", function="gemm", constexprs=[])
    assert "tl.store(binding1 + 2048 + b * 16 + m * 64 + n * 1" in transposed


def test_a_triton_family_declines_a_folded_table(block):
    from iree_kernels.kinds import triton_family
    assert triton_family.decline(block["main$async_dispatch_2"]) == ""
    assert "folded table" in triton_family.decline(block["main$async_dispatch_11"])


@pytest.mark.parametrize("export", ['x\n#include "/etc/passwd"', "x\nimport os; os.system('id')"])
def test_an_export_name_that_would_write_code_into_a_generated_file_is_refused(block, export):
    from iree_kernels.kinds import triton_family
    facts = block["main$async_dispatch_2"]
    with pytest.raises(Unsupported, match="not a plain symbol"):
        header(facts, executable="x", export=export, model="m", target="llvm-cpu", cuda=False)
    with pytest.raises(Unsupported, match="not a plain symbol"):
        triton_family.entry(facts, executable="x", export=export, model="m", target="cuda",
                            kernel="k.py", function="gemm", constexprs=[])


def test_a_generic_contraction_is_read_as_matmul_like_with_its_operands_layout():
    path = DATA / "matmul_like.mlir"          # x @ w^T written as a linalg.generic
    (facts,) = read_contractions(path.read_text(), str(path)).values()
    assert facts.describe() == "matmul_transpose_b_like 64x48x32 f32 -> f32"
    assert (facts.lhs.dims, facts.rhs.dims, facts.out.dims) == (("m", "k"), ("n", "k"),
                                                                ("m", "n"))


def test_a_triton_family_declines_an_epilogue_constant_that_is_not_finite(block):
    from iree_kernels.kinds import triton_family
    facts = block["main$async_dispatch_8"].to_dict()
    facts["epilogue"] = ["max", ["acc"], ["const", float("-inf"), "f32"]]
    assert "not finite" in triton_family.decline(Contraction.from_dict(facts))


def test_relu_as_torch_writes_it_is_read_at_an_executable_of_four_sites():
    path = DATA / "linear_relu.mlir"          # weights and bias share binding 1 at push offsets
    (facts,) = read_contractions(path.read_text(), str(path)).values()
    assert facts.describe() == ("matmul_transpose_b 8x1024x1024 f32 -> f32, epilogue (select "
                                "(cmp ugt (add acc input0) 0.0) (add acc input0) 0.0)")
    assert [(o.binding, o.offset) for o in (facts.lhs, facts.rhs, *facts.inputs, facts.out)] == \
        [(0, ("push", 0)), (1, ("push", 1)), (1, ("push", 2)), (2, ("push", 3))]


def test_a_power_by_a_constant_integer_reads_as_its_products():
    path = DATA / "gelu_tanh_fpowi.mlir"      # GPT-2's GELU: 0.5 x (1 + tanh(c (x + 0.044715 x^3)))
    (facts,) = read_contractions(path.read_text(), str(path)).values()
    x = "(add acc input0)"
    assert f"(mul (mul {x} {x}) {x})" in expression_text(facts.epilogue)
    assert "(tanh " in expression_text(facts.epilogue)


def test_a_power_by_an_exponent_over_eight_is_declined():
    path = DATA / "gelu_tanh_fpowi.mlir"
    text = path.read_text().replace("arith.constant 3 : i64", "arith.constant 9 : i64")
    (why,) = read_contractions(text, str(path)).values()
    assert why == "its epilogue raises to a power that is not a constant of at most 8 (%c9_i64)"
