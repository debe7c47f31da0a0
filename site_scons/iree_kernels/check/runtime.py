"""Which IREE runtime devices this machine has (local CPU, Vulkan, CUDA)."""
from __future__ import annotations

import subprocess
from functools import lru_cache

from iree_kernels.core import toolchains


@lru_cache(maxsize=None)
def available_drivers(run_module: str,
                      timeouts: toolchains.Timeouts | None = None) -> frozenset[str]:
    """Drivers with at least one device here, from ``iree-run-module --list_devices``."""
    try:
        result = subprocess.run([toolchains.real_program(run_module), "--list_devices"],
                                capture_output=True,
                                text=True,
                                timeout=(timeouts or toolchains.default_timeouts())
                                .of("VERSION_TIMEOUT"))
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(line.split("://", 1)[0] for line in result.stdout.splitlines()
                     if "://" in line)


def device_driver(device: str) -> str:
    return device.split("://", 1)[0]
