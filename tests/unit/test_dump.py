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
