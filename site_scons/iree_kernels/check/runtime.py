"""Which IREE runtime devices this machine has (local CPU, Vulkan, CUDA)."""
from __future__ import annotations

from functools import lru_cache

from iree_kernels.core import toolchains


@lru_cache(maxsize=None)
def available_drivers(run_module: str,
                      timeouts: toolchains.Timeouts | None = None) -> frozenset[str]:
    """Drivers with at least one device here, from ``iree-run-module --list_devices``."""
    return frozenset(device_driver(d) for d in toolchains.runtime_devices(run_module, timeouts))


def device_driver(device: str) -> str:
    return device.split("://", 1)[0]
