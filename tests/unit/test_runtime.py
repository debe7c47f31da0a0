"""iree_kernels.check.runtime: the drivers iree-run-module lists, read from a stand-in program."""
from __future__ import annotations

import sys

from iree_kernels.check import runtime
from iree_kernels.core import toolchains

LISTING = "local-sync://\nlocal-task://\nvulkan://00000000-0000\nsome banner line\ncuda://GPU-1\n"


def program(tmp_path, body: str) -> str:
    path = tmp_path / "iree-run-module"
    path.write_text(f"#!{sys.executable}\nimport sys, time\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_the_drivers_are_the_listed_devices_schemes(tmp_path):
    run_module = program(tmp_path, f"assert sys.argv[1:] == ['--list_devices']\nprint({LISTING!r})")
    assert runtime.available_drivers(run_module) == {"local-sync", "local-task", "vulkan", "cuda"}


def test_a_program_that_cannot_run_or_hangs_has_no_drivers(tmp_path):
    assert runtime.available_drivers(str(tmp_path / "missing")) == frozenset()
    limits = toolchains.Timeouts.from_values({"VERSION_TIMEOUT": "0.5"})
    assert runtime.available_drivers(program(tmp_path, "time.sleep(30)"), limits) == frozenset()


def test_the_answer_is_asked_once_per_program(tmp_path):
    run_module = program(tmp_path, "print('vulkan://0')")
    assert runtime.available_drivers(run_module) == {"vulkan"}
    (tmp_path / "iree-run-module").write_text("#!/bin/sh\necho cuda://0\n")
    assert runtime.available_drivers(run_module) == {"vulkan"}         # cached


def test_a_devices_driver_is_its_scheme():
    assert runtime.device_driver("vulkan://00000000-0000") == "vulkan"
    assert runtime.device_driver("local-task") == "local-task"
