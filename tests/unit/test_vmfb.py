"""vmfb.replace_segments: a module's rodata segments replaced, every offset the zip and the
FlatBuffer hold kept right; relink's naming and interface rules."""
from __future__ import annotations

import io
import subprocess
import zipfile

import pytest

from conftest import REPO
from iree_kernels.module import relink
from iree_kernels.core import toolchains
from iree_kernels.ir import vmfb
from iree_kernels.core.errors import UserError
from iree_kernels.ir.targets import TARGETS

SEGMENT = "main_dispatch_1_embedded_elf_x86_64.so"


@pytest.fixture(scope="module")
def unlinked(tmp_path_factory) -> bytes:
    """mlp for llvm-cpu, executables unlinked: a weights segment, then one per executable."""
    out = tmp_path_factory.mktemp("vmfb") / "mlp.vmfb"
    subprocess.run([toolchains.iree_compile(), str(REPO / "models/mlp.mlir"),
                    *TARGETS["llvm-cpu"].flags(), relink.UNLINKED, "-o", str(out)],
                   check=True, capture_output=True)
    return out.read_bytes()


def entries(content: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(content))
    assert archive.testzip() is None
    return {info.filename: archive.read(info) for info in archive.infolist()}


def test_nothing_replaced_is_the_same_bytes(unlinked):
    assert SEGMENT in vmfb.segment_names(unlinked)
    assert vmfb.replace_segments(unlinked, {}) == unlinked


@pytest.mark.parametrize("size", [1, 63, 64, 5000, 100_003])
def test_a_segment_of_another_size_moves_what_follows_and_every_offset(unlinked, size):
    data = bytes(range(256)) * (size // 256) + bytes(size % 256)
    replaced = vmfb.replace_segments(unlinked, {SEGMENT: data})
    before, after = entries(unlinked), entries(replaced)
    assert after[SEGMENT] == data
    assert {n: b for n, b in after.items() if n not in (SEGMENT, vmfb.FLATBUFFER_ENTRY)} == \
        {n: b for n, b in before.items() if n not in (SEGMENT, vmfb.FLATBUFFER_ENTRY)}
    # The FlatBuffer's (offset, length) of each external segment is where the zip has it.
    layout = vmfb._Layout(replaced)
    located = {layout.entry_at(s.start).name: replaced[s.start:s.start + s.length]
               for s in layout.segments}
    assert located == {n: b for n, b in after.items() if n != vmfb.FLATBUFFER_ENTRY}
    # Whatever followed keeps its alignment.
    old, new = vmfb._Layout(unlinked), layout
    for a, b in zip(old.entries, new.entries):
        assert (b.data - a.data) % vmfb.ALIGNMENT == 0


def test_an_unknown_segment_or_the_flatbuffer_is_refused(unlinked):
    with pytest.raises(vmfb.NotRelinkable, match="no rodata segment named nothing.so"):
        vmfb.replace_segments(unlinked, {"nothing.so": b"x"})
    with pytest.raises(vmfb.NotRelinkable, match="module.fb"):
        vmfb.replace_segments(unlinked, {vmfb.FLATBUFFER_ENTRY: b"x"})


@pytest.mark.parametrize("content", [b"", b"not a module", b"PK\x05\x06" + bytes(18)])
def test_a_file_that_is_not_a_module_is_refused(content):
    with pytest.raises(vmfb.NotRelinkable):
        vmfb.segment_names(content)


def test_segments_are_found_by_iree_s_names():
    names = ["_const.bin", "main_async_dispatch_0_embedded_elf_x86_64.so",
             "main_async_dispatch_1_cuda_nvptx_fb.fb"]
    assert relink.segment(names, "main$async_dispatch_0", "embedded_elf_x86_64") == names[1]
    assert relink.segment(names, "main$async_dispatch_1", "cuda_nvptx_fb") == names[2]
    assert relink.segment(names, "main$async_dispatch_2", "cuda_nvptx_fb") is None
    # Two executables IREE writes alike: which one is which cannot be told.
    assert relink.segment(names + ["main_async_dispatch_0_embedded_elf_x86_64.o"],
                          "main$async_dispatch_0", "embedded_elf_x86_64") is None


EXPORTS = """hal.executable {visibility} @x {
  hal.executable.variant public @v target(#t) {
    hal.executable.export public @f ordinal(0) layout(#l) count(%arg0: !hal.device) -> (index, index, index) {
      %c{count} = arith.constant {count} : index
      hal.return %c{count}, %c{count}, %c{count} : index, index, index
    }
  }
}
"""


def exports(visibility="public", count=1):
    return EXPORTS.replace("{visibility}", visibility).replace("{count}", str(count))


def test_the_interface_is_the_export_ops_whatever_the_visibility():
    ours = relink.interface(exports())
    assert ours.startswith("x {") and "hal.executable.export public @f" in ours
    assert relink.interface(exports("private")) == ours
    assert relink.interface(exports(count=4)) != ours
    assert relink.variant(ours) == "v"
    with pytest.raises(UserError, match="not a hal.executable"):
        relink.interface("module {}", "k.mlir")


def test_a_wrapper_s_objects_become_four_embedded_bytes():
    wrapper = 'objects([#hal.executable.object<{path = "build/k.ptx"}>, ' \
              '#hal.executable.object<{path = "x.ptx", data = dense<1> : vector<1xi8>}>])'
    assert relink.placeholder(wrapper) == (
        'objects([#hal.executable.object<{path = "build/k.ptx", '
        'data = dense<[0, 0, 0, 0]> : vector<4xi8>}>, '
        '#hal.executable.object<{path = "x.ptx", data = dense<1> : vector<1xi8>}>])')
