"""iree_kernels.ir.wrappers: the hal.executable a wrapped substitution puts in place of IREE's."""
from __future__ import annotations

import pytest

from iree_kernels.core import toolchains
from iree_kernels.ir.executables import Executable, Export, parse_layout
from iree_kernels.ir.workgroups import ExpressionError
from iree_kernels.ir.wrappers import c_signature, render_wrapper

LAYOUT = ('#hal.pipeline.layout<constants = 2, bindings = ['
          '#hal.pipeline.binding<storage_buffer, "ReadOnly|Indirect">, '
          '#hal.pipeline.binding<storage_buffer, ReadOnly>, #hal.pipeline.binding<storage_buffer>]>')
TARGET = '#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64">'


def executable(layout: str = LAYOUT, workload: int = 1) -> Executable:
    export = Export("main_dispatch_0_generic", 0, parse_layout(layout), None, layout, workload)
    return Executable("main_dispatch_0", "llvm-cpu", "embedded-elf-x86_64", (export,),
                      "embedded_elf_x86_64", TARGET)


def test_the_c_abi_is_bindings_then_constants_then_ids_and_counts():
    types, operands = c_signature(executable())
    assert types == "memref<i8>, memref<i8>, memref<i8>, i32, i32, " + ", ".join(["index"] * 6)
    assert operands == ("%binding0, %binding1, %binding2, %constant0, %constant1, "
                        "%id0, %id1, %id2, %count0, %count1, %count2")


def test_without_constants_the_abi_has_none():
    layout = '#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>'
    types, operands = c_signature(executable(layout))
    assert types.split(", ")[:2] == ["memref<i8>", "index"] and "i32" not in types
    assert operands.startswith("%binding0, %id0")


def test_the_wrapper_keeps_iree_names_and_links_the_object():
    text = render_wrapper(executable(), "build/llvm-cpu/k.o", ["ceildiv(w0, 64)"], None, "saxpy",
                          manifest="kernels/k.toml")
    assert text.startswith("// Generated from kernels/k.toml; do not edit.\n")
    assert "hal.executable public @main_dispatch_0 {" in text
    assert f"variant public @embedded_elf_x86_64 target({TARGET}) objects([" \
           '#hal.executable.object<{path = "build/llvm-cpu/k.o"}>])' in text
    assert "export public @main_dispatch_0_generic ordinal(0) layout(" in text
    assert "count(%device: !hal.device, %w0: index) -> (index, index, index)" in text
    assert "%v1 = arith.ceildivui %w0, %c64 : index" in text
    assert "hal.return %v1, %c1, %c1 : index, index, index" in text
    assert "workgroup_size" not in text                 # none given: IREE's own stays out


def test_the_c_function_is_a_static_import_called_with_every_binding():
    text = render_wrapper(executable(), "k.o", [1], None, "saxpy")
    types, operands = c_signature(executable())
    assert f"func.func private @saxpy({types}) attributes {{hal.import.static, llvm.bareptr = true}}" in text
    assert f"func.call @saxpy({operands}) : ({types}) -> ()" in text
    assert 'binding(0) alignment(64) offset(%c0) flags("ReadOnly|Indirect") : memref<i8>' in text
    assert "binding(1) alignment(64) offset(%c0) flags(ReadOnly) : memref<i8>" in text
    assert "binding(2) alignment(64) offset(%c0) : memref<i8>" in text
    assert "hal.interface.constant.load" in text and "ordinal(1) : i32" in text


def test_a_gpu_kernel_has_no_function_and_no_module():
    text = render_wrapper(executable(), "k.ptx", ["w0"], [256], None)
    assert "builtin.module" not in text and "func.call" not in text


@pytest.mark.parametrize("release, spelled", [
    ((3, 13), "} <workgroup_size = [256 : index, 1 : index, 1 : index]>"),
    ((4, 0), "} <workgroup_size = [256 : index, 1 : index, 1 : index]>"),
    ((3, 12), "} attributes {workgroup_size = [256 : index, 1 : index, 1 : index]}"),
])
def test_the_workgroup_size_is_spelled_as_the_iree_release_wants(release, spelled):
    text = render_wrapper(executable(), "k.ptx", ["w0"], [256], None, iree_release=release)
    assert spelled in text


def test_the_newest_spelling_is_the_default_and_sizes_are_padded_to_three():
    text = render_wrapper(executable(), "k.spv", ["w0"], [8, 8], None)
    assert "<workgroup_size = [8 : index, 8 : index, 1 : index]>" in text


def test_a_bad_count_raises_the_expression_error():
    with pytest.raises(ExpressionError, match="unknown name 'w1'; the workload values are w0"):
        render_wrapper(executable(), "k.o", ["w1"], None, "saxpy")


def test_an_object_path_is_quoted_as_json():
    text = render_wrapper(executable(), 'build/a "b"\\c.o', [1], None, "f")
    assert '#hal.executable.object<{path = "build/a \\"b\\"\\\\c.o"}>' in text


@pytest.mark.skipif(toolchains.iree_compile() is None, reason="no iree-compile")
def test_the_wrapper_is_mlir_the_installed_iree_parses():
    from iree.compiler import ir
    release = toolchains.iree_release(toolchains.iree_compile())
    text = render_wrapper(executable(), "k.o", ["ceildiv(w0, 64)", "max(w0, 1) // 2"], [64],
                          "saxpy", iree_release=release)
    with ir.Context():
        module = ir.Module.parse(text)
        assert "hal.executable" in str(module)
