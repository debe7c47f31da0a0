"""iree_kernels.binaries.ptx_text against real nvcc and IREE output, and hand-edited copies of it."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Binding, Executable, Export, Layout
from iree_kernels.binaries.ptx_text import check_ptx, ptxas_argv, read_ptx, run_ptxas

DATA = Path(__file__).parent.parent / "data" / "ptx"
ELEMENTWISE = "main_dispatch_0_elementwise_1024_f32"
DYNAMIC = "main_dispatch_0_elementwise_D_f32"


def _tool(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    fallback = Path("/usr/local/cuda/bin") / name
    return str(fallback) if fallback.exists() else None


NVCC, PTXAS = _tool("nvcc"), _tool("ptxas")
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not found")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas not found")


def executable(export_name: str, bindings: int, constants: int = 0) -> Executable:
    layout = Layout(tuple(Binding(i, "storage_buffer", i < bindings - 1) for i in range(bindings)),
                    constants)
    return Executable("main_dispatch_0", "cuda", "cuda-nvptx-fb",
                      (Export(export_name, 0, layout, (32, 1, 1)),))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """PTX text of each tests/data/ptx/*.cu, compiled by nvcc for sm_80."""
    if NVCC is None:
        pytest.skip("nvcc not found")
    out = tmp_path_factory.mktemp("ptx")
    texts = {}
    for source in sorted(DATA.glob("*.cu")):
        ptx = out / f"{source.stem}.ptx"
        subprocess.run([NVCC, "-ptx", "-arch=sm_80", str(source), "-o", str(ptx)], check=True)
        texts[source.stem] = ptx.read_text()
    return texts


def check(text: str, exe: Executable, **kwargs) -> None:
    check_ptx(read_ptx(text, "k.ptx"), "k.ptx", exe, **kwargs)


def error_of(text: str, exe: Executable, **kwargs) -> UserError:
    with pytest.raises(UserError) as info:
        check(text, exe, **kwargs)
    assert info.value.file == "k.ptx"
    assert "'main_dispatch_0'" in info.value.message
    return info.value


@needs_nvcc
def test_reads_nvcc_output(compiled):
    module = read_ptx(compiled["dynamic"], "dynamic.ptx")
    assert module.version >= (9, 0) and module.target == "sm_80" and module.address_size == 64
    kernel = module.entries[DYNAMIC]
    assert kernel.params == (".u64", ".u64", ".u64", ".u32", ".u32")
    assert compiled["dynamic"].splitlines()[kernel.line - 1].startswith(f".visible .entry {DYNAMIC}(")


@needs_nvcc
def test_correct_kernels_pass(compiled):
    check(compiled["elementwise"], executable(ELEMENTWISE, 3))
    check(compiled["dynamic"], executable(DYNAMIC, 3, constants=2))


def test_reads_iree_output_with_ptr_qualifiers_and_comments():
    text = (DATA / "iree_elementwise_1024_f32.ptx").read_text()
    module = read_ptx(text, "iree.ptx")
    assert module.version == (7, 6)
    assert list(module.entries) == [ELEMENTWISE]
    assert module.entries[ELEMENTWISE].params == (".u64",) * 3
    check(text, executable(ELEMENTWISE, 3))


def test_params_spread_over_lines_with_block_comments():
    text = (".version 8.0 /* ISA */\n.target sm_80\n.address_size 64\n"
            "// .entry commented_out(.param .u32 x)\n"
            ".visible .entry k /* kernel */ (\n  .param .u64 .ptr .global\n"
            "  .align 4 k_param_0, /* a, b */\n  .param .align 4 .b8 k_param_1[8],\n"
            "  .param .f32 k_param_2\n)\n.maxntid 32, 1, 1\n{\n ret;\n}\n")
    module = read_ptx(text, "k.ptx")
    assert list(module.entries) == ["k"]
    assert module.entries["k"].params == (".u64", ".b8[8]", ".f32")
    assert module.entries["k"].line == 5


@needs_nvcc
def test_wrong_name_suggests_closest(compiled):
    error = error_of(compiled["elementwise"], executable("main_dispatch_0_elementwise_1024_f16", 3))
    assert "no .entry named 'main_dispatch_0_elementwise_1024_f16'" in error.message
    assert f"did you mean '{ELEMENTWISE}'?" in error.message
    assert "extern" not in error.message


@needs_nvcc
def test_mangled_name_asks_for_extern_c(compiled):
    error = error_of(compiled["mangled"], executable(ELEMENTWISE, 3))
    assert "'_Z36main_dispatch_0_elementwise_1024_f32PKfS0_Pf' is the C++-mangled name" in error.message
    assert 'extern "C"' in error.message


@needs_nvcc
def test_unrelated_name_next_to_mangled_one(compiled):
    error = error_of(compiled["mangled"], executable("main_dispatch_1_reduce", 3))
    assert "found '_Z36main_dispatch_0_elementwise_1024_f32PKfS0_Pf'" in error.message
    assert "did you mean" not in error.message
    assert 'C++-mangled: a kernel needs extern "C"' in error.message


@needs_nvcc
def test_too_few_params(compiled):
    error = error_of(compiled["elementwise"], executable(ELEMENTWISE, 3, constants=1))
    assert "has 3 parameters, expected 4 (3 bindings + 1 push constant)" in error.message
    assert "(ptr binding0, ptr binding1, ptr binding2, i32 c0)" in error.message
    assert error.line == compiled["elementwise"].splitlines().index(
        f".visible .entry {ELEMENTWISE}(") + 1


@needs_nvcc
def test_too_many_params(compiled):
    error = error_of(compiled["dynamic"], executable(DYNAMIC, 3))
    assert "has 5 parameters, expected 3 (3 bindings + 0 push constants)" in error.message
    assert "found (.u64, .u64, .u64, .u32, .u32)" in error.message


@needs_nvcc
def test_32_bit_pointer(compiled):
    text = compiled["elementwise"].replace(f".param .u64 {ELEMENTWISE}_param_1",
                                           f".param .u32 {ELEMENTWISE}_param_1")
    error = error_of(text, executable(ELEMENTWISE, 3))
    assert "parameter 2 (binding1) is .u32, expected a 64-bit pointer" in error.message


@needs_nvcc
def test_64_bit_push_constant(compiled):
    text = compiled["dynamic"].replace(f".param .u32 {DYNAMIC}_param_4",
                                       f".param .u64 {DYNAMIC}_param_4")
    error = error_of(text, executable(DYNAMIC, 3, constants=2))
    assert "parameter 5 (c1) is .u64, expected a 32-bit push constant" in error.message


@needs_nvcc
def test_version_too_new(compiled):
    text = compiled["elementwise"].replace(".version 9.0", ".version 9.5")
    error = error_of(text, executable(ELEMENTWISE, 3))
    assert "PTX ISA version 9.5 is newer than 9.0" in error.message
    assert "PTX_ISA_VERSION" in error.message and "CUDA 13.0" in error.message
    assert text.splitlines()[error.line - 1] == ".version 9.5"
    check(text, executable(ELEMENTWISE, 3), max_version=(9, 5))


def test_manifest_entry_is_named():
    text = (DATA / "iree_elementwise_1024_f32.ptx").read_text()
    with pytest.raises(UserError) as info:
        check(text, executable("other", 3), entry="[[cuda]] #1")
    assert info.value.entry == "[[cuda]] #1"


@pytest.mark.parametrize("text, words", [
    ("", "empty"),
    ("  \n// nothing\n", "empty"),
    (".target sm_80\n.visible .entry k()\n{\n}\n", "no '.version'"),
    (".version 9.0\n.target sm_80\n.func helper()\n{\n}\n", "no '.entry'"),
])
def test_not_a_kernel(text, words):
    with pytest.raises(UserError) as info:
        read_ptx(text, "k.ptx")
    assert words in info.value.message and info.value.file == "k.ptx"


def test_ptxas_argv():
    assert ptxas_argv("ptxas", "k.ptx", "sm_80") == ["ptxas", "-arch=sm_80", "k.ptx", "-o", "/dev/null"]


@needs_ptxas
def test_ptxas_accepts_good_ptx():
    run_ptxas(PTXAS, str(DATA / "iree_elementwise_1024_f32.ptx"), "sm_80")


@needs_ptxas
def test_ptxas_rejects_corrupted_ptx_with_line(tmp_path):
    lines = (DATA / "iree_elementwise_1024_f32.ptx").read_text().splitlines()
    bad_line = next(i for i, line in enumerate(lines) if line.strip().startswith("ret;"))
    lines[bad_line] = "\tretx;"
    bad = tmp_path / "bad.ptx"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(UserError) as info:
        run_ptxas(PTXAS, str(bad), "sm_80")
    assert info.value.file == str(bad) and info.value.line == bad_line + 1
    assert "error: " in info.value.message and "retx" in info.value.message
    assert "aborted" not in info.value.message


def test_missing_ptxas():
    with pytest.raises(UserError) as info:
        run_ptxas("/nonexistent/ptxas", "k.ptx", "sm_80")
    assert "cannot run ptxas" in info.value.message


def test_an_onnx_export_is_launched_by_its_name_with_the_dollar_as_underscore():
    """IREE's CUDA runtime looks kernels up with '$' as '_' (CUDA_ERROR_NOT_FOUND otherwise, H200)."""
    def ptx(name: str) -> str:
        return (".version 8.0\n.target sm_80\n.address_size 64\n"
                f".visible .entry {name}(\n .param .u64 p0,\n .param .u64 p1\n)\n{{\n ret;\n}}\n")
    export = "net$async_dispatch_0_elementwise_4_f32"
    check(ptx("net_async_dispatch_0_elementwise_4_f32"), executable(export, 2))
    error = error_of(ptx(export), executable(export, 2))
    assert "no .entry named 'net_async_dispatch_0_elementwise_4_f32'" in error.message
