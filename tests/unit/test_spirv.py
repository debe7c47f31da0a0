"""read_spirv and check_spirv against shaders compiled from tests/data/spirv/*.comp."""
from __future__ import annotations

import random
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Binding, Executable, Export, Layout
from iree_kernels.binaries.spirv import SpirvBinding, SpirvModule, check_spirv, read_spirv

if shutil.which("glslangValidator") is None:
    pytest.skip("glslangValidator is not on PATH", allow_module_level=True)

DATA = Path(__file__).resolve().parent.parent / "data" / "spirv"
EXECUTABLE = "main_dispatch_0"
EXPORT = "main_dispatch_0_elementwise_1024_f32"
ENTRY = "[[substitutions]] #2"
ENVS = ["vulkan1.0", "vulkan1.3"]       # Uniform+BufferBlock / StorageBuffer buffers


def compile_glsl(tmp_path: Path, fixture: str, entry: str = EXPORT, env: str = "vulkan1.0") -> Path:
    out = tmp_path / f"{fixture}-{env}.spv"
    subprocess.run(["glslangValidator", "-V", "--target-env", env, "-e", entry,
                    "--source-entrypoint", "main", str(DATA / f"{fixture}.comp"), "-o", str(out)],
                   check=True, capture_output=True)
    return out


def load(tmp_path: Path, fixture: str, **kwargs) -> tuple[SpirvModule, str]:
    path = compile_glsl(tmp_path, fixture, **kwargs)
    return read_spirv(path.read_bytes(), str(path)), str(path)


def executable(read_only=(True, True, False), constants: int = 4) -> Executable:
    layout = Layout(tuple(Binding(i, "storage_buffer", ro) for i, ro in enumerate(read_only)),
                    constants)
    return Executable(EXECUTABLE, "vulkan-spirv", "vulkan-spirv-fb",
                      (Export(EXPORT, 0, layout, (64, 1, 1)),))


def mismatch(tmp_path: Path, fixture: str, target: Executable, **kwargs) -> str:
    module, path = load(tmp_path, fixture, **kwargs)
    with pytest.raises(UserError) as info:
        check_spirv(module, path, target, entry=ENTRY)
    assert (info.value.file, info.value.entry) == (path, ENTRY)
    assert f"executable '{EXECUTABLE}'" in info.value.message
    return info.value.message


def read_error(tmp_path: Path, data: bytes) -> str:
    path = str(tmp_path / "bad.spv")
    with pytest.raises(UserError) as info:
        read_spirv(data, path)
    assert info.value.file == path
    return info.value.message


# --- reading -----------------------------------------------------------------

@pytest.mark.parametrize("env", ENVS)
def test_reads_entry_points_bindings_and_push_constants(tmp_path, env):
    module, _ = load(tmp_path, "kernel", env=env)
    assert module == SpirvModule(
        entry_points=(EXPORT,), local_size=(64, 1, 1),
        bindings=(SpirvBinding(0, 0, True), SpirvBinding(0, 1, False), SpirvBinding(0, 2, False)),
        push_constant_words=4)


def test_reads_two_dimensional_local_size_and_padded_push_constant_struct(tmp_path):
    module, _ = load(tmp_path, "tile")
    assert module.local_size == (8, 8, 1)
    # uint n @0, float scale @4, vec3 bias @16 (aligned to 16): 28 bytes.
    assert module.push_constant_words == 7


@pytest.mark.parametrize("env", ENVS)
def test_reads_local_size_given_as_specialization_constant(tmp_path, env):
    module, _ = load(tmp_path, "spec_size", env=env)
    assert module.local_size == (32, 1, 1)


def test_marks_uniform_buffers(tmp_path):
    module, _ = load(tmp_path, "uniform")
    assert [b.kind for b in module.bindings] == \
        ["storage buffer", "uniform buffer", "storage buffer"]


@pytest.mark.skipif(shutil.which("spirv-dis") is None, reason="spirv-dis is not on PATH")
@pytest.mark.parametrize("fixture", ["kernel", "tile", "set1", "gap"])
def test_agrees_with_spirv_dis(tmp_path, fixture):
    path = compile_glsl(tmp_path, fixture)
    text = subprocess.run(["spirv-dis", "--raw-id", str(path)], check=True,
                          capture_output=True, text=True).stdout
    module = read_spirv(path.read_bytes(), str(path))
    local_size = re.search(r"OpExecutionMode %\d+ LocalSize (\d+) (\d+) (\d+)", text)
    assert module.local_size == tuple(int(v) for v in local_size.groups())
    sets = dict(re.findall(r"OpDecorate (%\d+) DescriptorSet (\d+)", text))
    slots = re.findall(r"OpDecorate (%\d+) Binding (\d+)", text)
    assert sorted((b.set, b.binding) for b in module.bindings) == \
        sorted((int(sets[ident]), int(binding)) for ident, binding in slots)
    assert module.entry_points == tuple(re.findall(r'OpEntryPoint GLCompute %\d+ "([^"]+)"', text))


# --- read errors -------------------------------------------------------------

def test_empty_file(tmp_path):
    assert "empty file" in read_error(tmp_path, b"")


def test_random_bytes(tmp_path):
    message = read_error(tmp_path, random.Random(0).randbytes(256))
    assert "not a SPIR-V binary" in message and "magic number 0x07230203" in message


def test_text_instead_of_binary(tmp_path):
    message = read_error(tmp_path, (DATA / "kernel.comp").read_bytes())
    assert "is it text" in message


def test_big_endian_words(tmp_path):
    data = compile_glsl(tmp_path, "kernel").read_bytes()
    words = struct.unpack(f"<{len(data) // 4}I", data)
    assert "big-endian" in read_error(tmp_path, struct.pack(f">{len(words)}I", *words))


def test_truncated_inside_an_instruction(tmp_path):
    data = compile_glsl(tmp_path, "kernel").read_bytes()
    # Cut inside OpEntryPoint, right after the first word of its name.
    cut = (data.index(EXPORT.encode()) // 4 + 1) * 4
    message = read_error(tmp_path, data[:cut])
    assert re.search(r"truncated SPIR-V: instruction at word \d+ \(opcode 15\) needs \d+ words",
                     message)


@pytest.mark.parametrize("cut", [-4, -3, 12])
def test_truncated_at_the_end_or_in_the_header(tmp_path, cut):
    data = compile_glsl(tmp_path, "kernel").read_bytes()
    assert "truncated SPIR-V" in read_error(tmp_path, data[:cut])


def test_zero_word_count(tmp_path):
    data = compile_glsl(tmp_path, "kernel").read_bytes()
    assert "word count 0" in read_error(tmp_path, data[:20] + bytes(4) + data[20:])


def test_corrupted_words_give_only_user_errors(tmp_path):
    data = bytearray(compile_glsl(tmp_path, "kernel").read_bytes())
    rng = random.Random(1)
    for _ in range(300):
        corrupt = bytearray(data)
        for _ in range(3):
            at = rng.randrange(20, len(data) // 4) * 4
            corrupt[at:at + 4] = rng.randbytes(4)
        try:
            read_spirv(bytes(corrupt), "bad.spv")
        except UserError as e:
            assert e.file == "bad.spv"


# --- checking against the executable ----------------------------------------

@pytest.mark.parametrize("env", ENVS)
def test_matching_kernel_passes(tmp_path, env):
    module, path = load(tmp_path, "kernel", env=env)
    check_spirv(module, path, executable(), entry=ENTRY)


def test_writable_shader_binding_where_iree_says_read_only_passes(tmp_path):
    module, path = load(tmp_path, "kernel")
    assert not module.bindings[1].read_only
    check_spirv(module, path, executable(read_only=(True, True, False)))


def test_more_push_constant_words_than_the_layout_passes(tmp_path):
    module, path = load(tmp_path, "kernel")
    check_spirv(module, path, executable(constants=2))


def test_wrong_entry_point(tmp_path):
    message = mismatch(tmp_path, "kernel", executable(), entry="main")
    assert f"expected a GLCompute entry point named '{EXPORT}'" in message
    assert "found 'main'" in message


def test_descriptor_set_other_than_zero(tmp_path):
    message = mismatch(tmp_path, "set1", executable(read_only=(True, False), constants=0))
    assert "binding 0 is in descriptor set 1, expected set 0" in message
    assert "set=1 crashes lavapipe" in message


def test_missing_binding(tmp_path):
    message = mismatch(tmp_path, "kernel", executable(read_only=(True, True, True, False)))
    assert "expected 4 bindings (4 bindings [0:ro, 1:ro, 2:ro, 3:rw], 4 push constants), " \
           "found 3 [0, 1, 2]" in message


def test_extra_binding(tmp_path):
    message = mismatch(tmp_path, "kernel", executable(read_only=(True, False)))
    assert "expected 2 bindings" in message and "found 3 [0, 1, 2]" in message


def test_binding_indices_with_a_gap(tmp_path):
    message = mismatch(tmp_path, "gap", executable(constants=0))
    assert "expected bindings 0..2, found [0, 1, 3]" in message


def test_uniform_buffer_binding(tmp_path):
    message = mismatch(tmp_path, "uniform", executable(constants=0))
    assert "binding 1 is a uniform buffer, expected a storage buffer" in message


def test_readonly_on_a_writable_binding(tmp_path):
    message = mismatch(tmp_path, "readonly_output",
                       executable(read_only=(True, False, False), constants=0))
    assert "binding 1 is writable in IREE's layout, but the shader declares it readonly" in message


def test_missing_push_constants(tmp_path):
    message = mismatch(tmp_path, "no_push", executable(constants=4))
    assert "expected a push-constant block of at least 4 32-bit words, found none" in message


def test_too_few_push_constant_words(tmp_path):
    message = mismatch(tmp_path, "kernel", executable(constants=6))
    assert "expected a push-constant block of at least 6 32-bit words, found 4" in message


def test_push_constants_where_none_expected(tmp_path):
    message = mismatch(tmp_path, "kernel", executable(constants=0))
    assert "expected no push constants, found a push-constant block of 4 words" in message


def test_no_local_size():
    module = SpirvModule((EXPORT,), None, (SpirvBinding(0, 0, False),), None)
    with pytest.raises(UserError) as info:
        check_spirv(module, "k.spv", executable(read_only=(False,), constants=0))
    assert "no workgroup size (LocalSize)" in info.value.message
    assert info.value.entry is None
