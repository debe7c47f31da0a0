"""Kernel skeletons: what IREE's executable needs is in them, and they compile as generated."""
from __future__ import annotations

import subprocess

import pytest

from iree_kernels import scaffold, toolchains
from iree_kernels.executables import Binding, Executable, Export, Layout, binding_offsets

SUBSPANS = """
          %c0 = arith.constant 0 : index
          %c2525184 = arith.constant 2525184 : index
          %c62848 = arith.constant 62848 : index
          %0 = hal.interface.binding.subspan layout(#l) binding(0) alignment(64) offset(%c2525184) flags("ReadOnly|Indirect") : !t
          %1 = hal.interface.binding.subspan layout(#l) binding(1) alignment(64) offset(%c62848) flags(ReadOnly) : !t
          %2 = hal.interface.binding.subspan layout(#l) binding(2) alignment(64) offset(%c0) flags(Indirect) : !t
          %3 = hal.interface.binding.subspan layout(#l) binding(2) alignment(64) offset(%c62848) flags(Indirect) : !t
          %4 = hal.interface.binding.subspan layout(#l) binding(3) alignment(64) offset(%9#1) flags(Indirect) : !t
"""


def test_each_bindings_byte_offsets_are_read_from_its_subspans():
    assert binding_offsets(SUBSPANS, 5) == ((2525184,), (62848,), (0, 62848),
                                            ("from push constants",), ())


def executable() -> Executable:
    layout = Layout((Binding(0, "storage_buffer", True), Binding(1, "storage_buffer", True),
                     Binding(2, "storage_buffer", False)), 0)
    export = Export("net$async_dispatch_6_elementwise_96x3136_f32", 0, layout, (16, 4, 1))
    return Executable("net$async_dispatch_6", "", "", (export,),
                      binding_types=("readonly:tensor<96x3136xf32>", "readonly:tensor<96xf32>",
                                     "writeonly:tensor<96x3136xf32>"),
                      binding_offsets=((2525184,), (62848,), (0,)))


def skeleton(language: str, target: str):
    return scaffold.skeleton(language, "net", target, executable(), executable())


def test_skeletons_state_and_apply_each_bindings_offset():
    cuda, glsl, c = (skeleton(*lt).text for lt in
                     (("cuda", "cuda"), ("glsl", "vulkan"), ("c", "llvm-cpu")))
    for text in (cuda, glsl, c):
        assert "readonly:tensor<96x3136xf32> at byte offset 2525184" in text
    assert "binding0 = (const float*)((const char*)binding0 + 2525184);" in cuda
    assert "binding2 = " not in cuda                       # at offset 0: nothing to add
    assert "const uint BINDING1_START = 62848u / 4u;" in glsl
    assert "binding1 = (const float *)((const char *)binding1 + 62848);" in c


def test_skeletons_cover_all_three_dimensions_of_the_launch():
    cuda, glsl = skeleton("cuda", "cuda").text, skeleton("glsl", "vulkan").text
    assert "gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z" in cuda
    assert "blockIdx.z" in cuda and "threadIdx.z" in cuda
    assert "gl_GlobalInvocationID.z" in glsl and "size.x * size.y * size.z" in glsl
    assert "void net_async_dispatch_6_elementwise_96x3136_f32(" in cuda


@pytest.mark.parametrize("language, target, argv", [
    ("glsl", "vulkan", ["glslangValidator", "-V", "--target-env", "vulkan1.0", "-S", "comp",
                        "{source}", "-o", "{out}"]),
    ("cuda", "cuda", ["nvcc", "-ptx", "-arch=sm_80", "-x", "cu", "{source}", "-o", "{out}"]),
    ("c", "llvm-cpu", ["clang", "-target", "x86_64-unknown-unknown-eabi-elf", "-ffreestanding",
                       "-x", "c", "-c", "{source}", "-o", "{out}"]),
])
def test_skeletons_with_offsets_compile_as_generated(tmp_path, language, target, argv):
    program = toolchains.nvcc() if argv[0] == "nvcc" else toolchains.on_path(argv[0])
    if program is None:
        pytest.skip(f"no {argv[0]}")
    source = tmp_path / f"kernel.{language}"
    source.write_text(skeleton(language, target).text)
    argv = [program, *(a.format(source=source, out=tmp_path / "out") for a in argv[1:])]
    result = subprocess.run(argv, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
