"""The listing 'scons dump' writes: what a kernel replacing each executable must accept."""
from __future__ import annotations

from iree_kernels import dump
from test_scaffold import executable


def test_the_listing_gives_each_bindings_tensor_access_and_byte_offset():
    text = dump.listing("net", "vulkan", {"net$async_dispatch_6": executable()}, {})
    assert "net$async_dispatch_6\n  export          net$async_dispatch_6_elementwise_96x3136_f32" \
        in text
    assert "binding 0       read-only  readonly:tensor<96x3136xf32> at byte offset 2525184" in text
    assert "binding 2       read-write writeonly:tensor<96x3136xf32> at byte offset 0" in text
    assert "workgroup size  16x4x1" in text


def test_dumped_sources_are_public_and_keep_names_that_need_quoting(tmp_path):
    program = ('module {\n  hal.executable private @"net-v2$async_dispatch_0" {\n  }\n'
               '  hal.executable private @main_dispatch_1 {\n  }\n}\n')
    dump.write_sources(program, "executables.mlir", tmp_path)
    assert (tmp_path / "module_net-v2$async_dispatch_0.mlir").read_text() == \
        'hal.executable public @"net-v2$async_dispatch_0" {\n}\n'
    assert (tmp_path / "module_main_dispatch_1.mlir").read_text() == \
        "hal.executable public @main_dispatch_1 {\n}\n"
