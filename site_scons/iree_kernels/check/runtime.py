"""Which IREE runtime devices this machine has (local CPU, Vulkan, CUDA)."""
from __future__ import annotations

from functools import lru_cache

from iree_kernels.core import processes, toolchains


@lru_cache(maxsize=None)
def available_drivers(run_module: str,
                      timeouts: toolchains.Timeouts | None = None) -> frozenset[str]:
    """Drivers with at least one device here, from ``iree-run-module --list_devices``."""
    try:
        result = processes.run([toolchains.real_program(run_module), "--list_devices"],
                               limit=(timeouts or toolchains.default_timeouts())
                               .of("VERSION_TIMEOUT"))
    except (OSError, processes.TimeLimit):
        return frozenset()
    return frozenset(line.split("://", 1)[0] for line in result.stdout.splitlines()
                     if "://" in line)


def device_driver(device: str) -> str:
    return device.split("://", 1)[0]
