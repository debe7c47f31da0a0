"""Kernel skeletons: what IREE's executable needs is in them, and they compile as generated."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iree_kernels.ir import dispatch_body
from iree_kernels.project import scaffold
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from conftest import DATA
from iree_kernels.ir.executables import Binding, Executable, Export, Layout, read_executables

MAX_POOL = (DATA / "executables/squeezenet_max_pool.mlir").read_text()       # IREE 3.13's dump
DYNAMIC = (DATA / "executables/layers_dynamic_matmul.mlir").read_text()


def test_each_bindings_byte_offsets_and_tensors_are_read_from_its_subspans():
    pool, = read_executables(MAX_POOL).values()
    assert pool.binding_offsets == ((0,), (3154176,))
    assert [s.describe() for s in pool.subspans] == [
        "readonly 64x111x111xf32 at byte offset 0",
        "writeonly 64x55x55xf32 at byte offset 3154176"]


def test_dynamic_sizes_and_offsets_are_named_by_the_push_constants_holding_them():
    matmul, = read_executables(DYNAMIC).values()
    assert matmul.binding_offsets == (("from push constants 0, 1",), (0,), (0,),
                                      ("from push constants 2, 3",))
    described = {s.binding: s.describe() for s in matmul.subspans}
    assert described[0] == ("readonly ?(push constants 4, 5 = w0)x23xf32 at a byte offset "
                            "from push constants 0, 1")
    assert described[3].startswith("writeonly ?(push constants 4, 5 = w0)x24xf32")
    assert described[1] == "readonly 23x24xf32 at byte offset 0"


def test_a_dynamic_skeleton_bounds_its_loop_by_the_push_constant_of_the_size():
    matmul, = read_executables(DYNAMIC).values()
    cuda = scaffold.skeleton("cuda", "layers", "cuda", matmul, matmul).text
    glsl = scaffold.skeleton("glsl", "layers", "vulkan", matmul, matmul).text
    assert "//   binding 3: read-write writeonly ?(push constants 4, 5 = w0)x24xf32" in cuda
    assert "i < c4 * 24u;" in cuda
    assert "i < push_constants.values[4] * 24u;" in glsl


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


def test_a_skeleton_of_a_real_dispatch_leaves_only_the_computation_to_write():
    pool, = read_executables(MAX_POOL).values()
    for language, target in (("cuda", "cuda"), ("glsl", "vulkan")):
        text = scaffold.skeleton(language, "squeezenet", target, pool, pool).text
        todo, = [line for line in text.splitlines() if "TODO" in line]
        assert "compute output i (writeonly 64x55x55xf32 at byte offset 3154176, binding 1)" in todo
        assert "< 193600u;" in text
        assert "3154176" in text.split("void main()" if language == "glsl" else "__global__")[1]


def test_skeletons_cover_all_three_dimensions_of_the_launch():
    cuda, glsl = skeleton("cuda", "cuda").text, skeleton("glsl", "vulkan").text
    assert "gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z" in cuda
    assert "blockIdx.z" in cuda and "threadIdx.z" in cuda
    assert "gl_GlobalInvocationID.z" in glsl and "size.x * size.y * size.z" in glsl
    assert "void net_async_dispatch_6_elementwise_96x3136_f32(" in cuda


COMPILERS = [
    ("glsl", "vulkan", ["glslangValidator", "-V", "--target-env", "vulkan1.0", "-S", "comp",
                        "{source}", "-o", "{out}"]),
    ("cuda", "cuda", ["nvcc", "-ptx", "-arch=sm_80", "-x", "cu", "{source}", "-o", "{out}"]),
    ("c", "llvm-cpu", ["clang", "-target", "x86_64-unknown-unknown-eabi-elf", "-ffreestanding",
                       "-x", "c", "-c", "{source}", "-o", "{out}"]),
]


def compile_skeleton(tmp_path, language, argv, text):
    program = toolchains.nvcc() if argv[0] == "nvcc" else toolchains.on_path(argv[0])
    if program is None:
        pytest.skip(f"no {argv[0]}")
    source = tmp_path / f"kernel.{language}"
    source.write_text(text)
    argv = [program, *(a.format(source=source, out=tmp_path / "out") for a in argv[1:])]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("language, target, argv", COMPILERS)
def test_skeletons_with_offsets_compile_as_generated(tmp_path, language, target, argv):
    compile_skeleton(tmp_path, language, argv, skeleton(language, target).text)


def test_a_kernels_path_is_per_target_and_safe_as_a_file_name():
    assert scaffold.kernel_path("cuda", "mlp", "cuda", "main_dispatch_0") == \
        "kernels/cuda/mlp_main_dispatch_0.cu"
    assert scaffold.kernel_path("glsl", "net-v2", "vulkan", "main$async_dispatch_1") == \
        "kernels/vulkan/net_v2_main_async_dispatch_1.glsl"
    assert scaffold.kernel_path("mlir", "mlp", "llvm-cpu", "d").endswith("/mlp_d.mlir")


def test_a_kernels_path_names_the_model_once_where_the_executable_starts_with_it():
    assert scaffold.kernel_path("c", "zfnet512", "llvm-cpu", "zfnet512$async_dispatch_3") == \
        "kernels/llvm-cpu/zfnet512_async_dispatch_3.c"
    assert scaffold.kernel_path("glsl", "net-v2", "vulkan", "net-v2$async_dispatch_1") == \
        "kernels/vulkan/net_v2_async_dispatch_1.glsl"
    # A model whose name is only the start of the executable's first word keeps both.
    assert scaffold.kernel_path("c", "zf", "llvm-cpu", "zfnet$async_dispatch_3") == \
        "kernels/llvm-cpu/zf_zfnet_async_dispatch_3.c"


def named(*names_and_exports):
    layout = Layout((Binding(0, "storage_buffer", True), Binding(1, "storage_buffer", False)), 0)
    return {name: Executable(name, "llvm-cpu", "embedded-elf-x86_64",
                             (Export(export, 0, layout, (1, 1, 1)),))
            for name, export in names_and_exports}


ZFNET = named(*[(f"zfnet512$async_dispatch_{n}", f"zfnet512$async_dispatch_{n}_"
                 f"{'matmul_64x64' if n == 3 else 'elementwise_64'}_f32") for n in range(12)])


def test_scaffold_selects_an_executable_by_name_number_or_export_glob():
    assert scaffold.select("zfnet512$async_dispatch_3", ZFNET, "zfnet512", "llvm-cpu") == \
        "zfnet512$async_dispatch_3"
    assert scaffold.select("3", ZFNET, "zfnet512", "llvm-cpu") == "zfnet512$async_dispatch_3"
    assert scaffold.select("10", ZFNET, "zfnet512", "llvm-cpu") == "zfnet512$async_dispatch_10"
    assert scaffold.select("*_matmul_*", ZFNET, "zfnet512", "llvm-cpu") == \
        "zfnet512$async_dispatch_3"


def test_scaffold_refuses_a_number_or_glob_matching_none_or_several():
    with pytest.raises(UserError, match="has no executable numbered 12 .named \\*_dispatch_12"):
        scaffold.select("12", ZFNET, "zfnet512", "llvm-cpu")
    with pytest.raises(UserError, match="no executable with an export matching '\\*conv\\*'"):
        scaffold.select("*conv*", ZFNET, "zfnet512", "llvm-cpu")
    with pytest.raises(UserError, match="11 executables match '\\*_elementwise_\\*'.*; name one"):
        scaffold.select("*_elementwise_*", ZFNET, "zfnet512", "llvm-cpu")


def test_a_name_cut_at_a_dollar_gets_a_hint_to_quote_it_and_candidates_sort_naturally():
    with pytest.raises(UserError) as cut:
        scaffold.select("zfnet512", ZFNET, "zfnet512", "llvm-cpu")
    message = str(cut.value)
    assert "the shell expands an unquoted '$', so 'zfnet512' may be " \
           "'zfnet512$async_dispatch_0' cut short: quote it " \
           "(SCAFFOLD='zfnet512/llvm-cpu/zfnet512$async_dispatch_0') or name the executable " \
           "by its number (SCAFFOLD=zfnet512/llvm-cpu/0)" in message
    listed = message.split("its executables: ")[1].split(", ")
    assert listed == [f"zfnet512$async_dispatch_{n}" for n in range(12)]
    with pytest.raises(UserError, match="did you mean 'zfnet512.async_dispatch_"):
        scaffold.select("zfnet512$async_dispatch_l", ZFNET, "zfnet512", "llvm-cpu")


def subspan(shape, dynamic_dims=()):
    from iree_kernels.ir.executables import Subspan
    return Subspan(1, 0, "writeonly", "f32", shape, dynamic_dims)


@pytest.mark.parametrize("language, shape, dynamic, count", [
    ("cuda", (64, 55, 55), (), "193600u"),
    ("c", (64, 55, 55), (), "193600"),
    ("glsl", (None, 23), (((4, 5), 0),), "push_constants.values[4] * 23u"),
    ("c", (None, 23), (((4, 5), 0),), "c4 * 23"),
    ("cuda", (None,), (((2,), 0),), "c2"),                    # a 32-bit size, no static factor
    ("cuda", (None, 8), (((), None),), ""),                    # no push constant holds it
    ("cuda", (None,), (((1, 2, 3), 0),), ""),                  # not a size of one or two words
])
def test_the_output_count_is_an_expression_of_the_kernels_language(language, shape, dynamic, count):
    assert scaffold.output_count(subspan(shape, dynamic), language) == count


def test_no_output_has_no_count():
    assert scaffold.output_count(None, "cuda") == ""


def test_a_language_must_be_known_and_fit_the_target():
    pool, = read_executables(MAX_POOL).values()
    with pytest.raises(scaffold.UserError, match="LANGUAGE: unknown language 'rust'; languages: "
                                                 "cuda, glsl, c, triton, mlir"):
        scaffold.skeleton("rust", "squeezenet", "vulkan", pool, pool)
    with pytest.raises(scaffold.UserError, match="LANGUAGE=cuda writes kernels for target 'cuda', "
                                                 "not 'vulkan'"):
        scaffold.skeleton("cuda", "squeezenet", "vulkan", pool, pool)


def test_an_mlir_skeleton_is_the_dumped_source_with_a_source_entry():
    pool, = read_executables(MAX_POOL).values()
    made = scaffold.skeleton("mlir", "squeezenet", "vulkan", pool, pool, dumped_source="// dumped\n")
    assert made.text == "// dumped\n"
    assert made.file == scaffold.kernel_path("mlir", "squeezenet", "vulkan", pool.name)
    assert 'mode = "source"' in made.entry and f'file = "{made.file}"' in made.entry


def test_a_triton_skeleton_takes_the_layout_and_its_entry_a_grid_and_block():
    pool, = read_executables(MAX_POOL).values()
    made = scaffold.skeleton("triton", "squeezenet", "hip", pool, pool)
    assert made.file == scaffold.kernel_path("triton", "squeezenet", "hip", pool.name)
    assert made.file.startswith("kernels/hip/") and made.file.endswith(".py")
    assert "#   binding 1: read-write writeonly 64x55x55xf32 at byte offset 3154176" in made.text
    assert "binding1 += 788544" in made.text                # 3154176 bytes of f32
    assert "mask = offsets < 193600" in made.text
    assert 'mode = "wrapped"' in made.entry and "constexprs = { BLOCK = 1024 }" in made.entry
    assert "workgroup_count = [190]" in made.entry          # ceildiv(193600, 1024)
    with pytest.raises(UserError, match="LANGUAGE=triton writes kernels for target 'cuda' or "
                                        "'hip', not 'vulkan'"):
        scaffold.skeleton("triton", "squeezenet", "vulkan", pool, pool)


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no triton")
def test_a_triton_skeleton_compiles_as_generated(tmp_path):
    from iree_kernels.kinds import triton, triton_kernels
    pool, = read_executables(MAX_POOL).values()
    made = scaffold.skeleton("triton", "squeezenet", "cuda", pool, pool)
    kernel = tmp_path / "kernel.py"
    kernel.write_text(made.text)
    spec = {"manifest": "kernels/k.toml: [[substitutions]] #1", "kernel": str(kernel),
            "function": Path(made.file).stem,
            "executable": pool.name, "entry": triton_kernels.entry_name(pool.export.name),
            "bindings": ["fp32", "fp32"], "constants": pool.export.layout.constants,
            "constexprs": {"BLOCK": triton.BLOCK}, "num_warps": 4, "num_stages": 0}
    (tmp_path / "interface.json").write_text(json.dumps(spec))
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = subprocess.run([sys.executable, triton_kernels.__file__, str(kernel), "--arch=sm_80",
                             f"--interface={tmp_path / 'interface.json'}",
                             f"--metadata={tmp_path / 'k.json'}", "-o", str(tmp_path / "k.ptx")],
                            capture_output=True, text=True, timeout=300,
                            env={**{k: v for k, v in os.environ.items()
                                    if k != "PYTHONDONTWRITEBYTECODE"}, "TMPDIR": str(temporary)})
    assert result.returncode == 0, result.stdout + result.stderr
    assert f".entry {spec['entry']}(" in (tmp_path / "k.ptx").read_text()
    assert not (tmp_path / "__pycache__").exists()          # nothing written beside the kernel
    assert list(temporary.iterdir()) == []                  # Triton's cache removed


def test_every_target_has_a_skeleton_language_that_writes_for_it():
    for target, language in scaffold.target_languages().items():
        assert target in scaffold.languages()[language].scaffold.targets
    from iree_kernels.ir.targets import TARGETS
    assert set(scaffold.target_languages()) == set(TARGETS)     # hip: triton, not a traceback


CONV = (DATA / "executables/convpad_conv_bias_relu.mlir").read_text()     # IREE 3.13's dump


def test_what_to_compute_is_read_from_the_dispatch_body():
    body = dispatch_body.read(CONV)
    assert body.inputs == ("%3 = binding 0 (readonly 4x10x10xf32 at byte offset 0)",
                           "%4 = binding 1 (readonly 4x4x3x3xf32 at byte offset 0)")
    ops = "\n".join(body.ops)
    assert ops.startswith("%5 = tensor.empty()") and "%9 = arith.mulf %in, %in_1 : f32" in ops
    assert "%10 = arith.maximumf %9, %cst : f32" in ops
    assert "hal.interface" not in ops and "dispatch.tensor" not in ops and "%c1600" not in ops
    # The bias is folded into the executable; the weights come in binding 1.
    assert [c.describe() for c in body.constants] == [
        "%cst = 0.000000e+00 : f32",
        "%cst_0 : tensor<4xf32> = dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, "
        "4.000000e-01]> (4 values: e.g. a static const array in the kernel)"]
    window, = body.windows
    assert window.describe().startswith(
        "binding 2 (readwrite 4x10x10xf32 at byte offset 1600): %8 goes in [0:4, 1:9, 1:9] "
        "(offsets [0, 1, 1], sizes [4, 8, 8]); the elements around it are not written here")
    assert not dispatch_body.read("")
    # One result of several (an op with two outputs, as zfnet512's convolutions have).
    several, = dispatch_body.read(CONV.replace("store %8, %2", "store %7#1, %2")).windows
    assert several.value == "%7#1" and several.binding == 2


def test_a_folded_resource_constants_elements_are_read_from_the_dump():
    text = CONV.replace("dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, 4.000000e-01]>",
                        "dense_resource<bias>")
    text += ('\n{-#\n  dialect_resources: {\n    builtin: {\n      bias: "0x04000000'
             + "".join(f"{b:02X}" for b in __import__("struct").pack("<4f", 1, 2, 3, 4))
             + '"\n    }\n  }\n#-}\n')
    constant = dispatch_body.read(text).constants[1]
    assert constant.elements == (1.0, 2.0, 3.0, 4.0) and constant.identifier == "cst_0"
    splat = dispatch_body.read(CONV.replace("dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, "
                                            "4.000000e-01]>", "dense<5.0>")).constants[1]
    assert splat.elements == ()             # one value: the kernel writes it as a number


def test_constants_say_how_the_kernel_gets_them_and_long_ones_are_cut():
    splat = dispatch_body.Constant("%cst", "tensor<4x4x3x3xf32>", "dense<2.500000e-01>")
    assert splat.describe().endswith("(a splat: every element is that one value)")
    resource = dispatch_body.Constant("%w", "tensor<64xf32>", "dense_resource<w>")
    assert "the model's resource of that name" in resource.describe()
    many = ", ".join("1.0" for _ in range(1000))
    text = CONV.replace("dense<[1.000000e-01, 2.000000e-01, 3.000000e-01, 4.000000e-01]> : "
                        "tensor<4xf32>", f"dense<[{many}]> : tensor<1000xf32>")
    constant = dispatch_body.read(text).constants[1]
    assert len(constant.value) < 300 and constant.value.endswith("every value)")


@pytest.mark.parametrize("language, target", [("c", "llvm-cpu"), ("cuda", "cuda"),
                                              ("glsl", "vulkan")])
def test_skeletons_carry_the_body_constants_and_output_window_as_comments(language, target):
    conv, = read_executables(CONV).values()
    text = scaffold.skeleton(language, "convpad", target, conv, conv, CONV).text
    comments = [line for line in text.splitlines() if line.startswith("//")]
    assert "// What to compute: the dispatch's body as IREE wrote it (scons dump: dump/sources/), " \
           "its" in comments
    assert "//   %8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, " \
           "affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], " \
           "iterator_types = [\"parallel\", \"parallel\", \"parallel\"]} ins(%7, %cst_0 : " \
           "tensor<4x8x8xf32>, tensor<4xf32>) outs(%5 : tensor<4x8x8xf32>) {" in comments
    assert any(line.startswith("//   %cst_0 : tensor<4xf32> = dense<[") for line in comments)
    # ... and its values written out, as the language declares an array.
    declared = {"c": "static const float cst_0[4] = {\n    0.1f, 0.2f, 0.3f, 0.4f\n};",
                "cuda": "__device__ const float cst_0[4] = {\n    0.1f, 0.2f, 0.3f, 0.4f\n};",
                "glsl": "const float cst_0[4] = float[4](\n    0.1, 0.2, 0.3, 0.4\n);"}
    assert f"// %cst_0 : tensor<4xf32>, row-major\n{declared[language]}\n" in text
    assert any(line.startswith("//   binding 2 (readwrite 4x10x10xf32 at byte offset 1600): "
                               "%8 goes in [0:4, 1:9, 1:9]") for line in comments)


@pytest.mark.parametrize("language, target, argv", COMPILERS)
def test_a_skeleton_with_its_body_compiles_as_generated(tmp_path, language, target, argv):
    conv, = read_executables(CONV).values()
    text = scaffold.skeleton(language, "convpad", target, conv, conv, CONV).text
    assert "// What to compute" in text
    compile_skeleton(tmp_path, language, argv, text)


@pytest.mark.parametrize("language, target", [("glsl", "vulkan"), ("cuda", "cuda")])
def test_where_irees_codegen_fails_a_gpu_skeleton_is_wrapped_with_its_own_launch(language,
                                                                                 target):
    # The build's error for such an executable recommends a wrapped kernel: scaffold writes one.
    pool, = read_executables(MAX_POOL).values()
    made = scaffold.skeleton(language, "squeezenet", target, pool, None)
    assert 'mode = "wrapped"' in made.entry and "workgroup_size = [64]" in made.entry
    assert "workgroup_count = [1]" in made.entry
    assert ("local_size_x = 64," if language == "glsl" else "blockDim.x") in made.text
    assert scaffold.skeleton("mlir", "squeezenet", target, pool, None, MAX_POOL).text == MAX_POOL


def test_where_irees_codegen_fails_a_kind_without_wrapped_mode_writes_no_skeleton(monkeypatch):
    import dataclasses
    pool, = read_executables(MAX_POOL).values()
    glsl = scaffold.languages()["glsl"]
    objects_only = dataclasses.replace(glsl, modes=("object",))
    monkeypatch.setattr(scaffold, "languages", lambda: {"glsl": objects_only})
    with pytest.raises(UserError, match="takes none of its own; scaffold it as LANGUAGE=mlir"):
        scaffold.skeleton("glsl", "squeezenet", "vulkan", pool, None)
