"""GPU architectures: parsing CUDA_ARCH/HIP_ARCH, module folders, and what iree-compile accepts."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from iree_kernels.core import toolchains
from iree_kernels.ir.targets import (TARGETS, module_targets, parse_archs, rejected_arch_message)

CUDA, HIP = TARGETS["cuda"], TARGETS["hip"]


def test_one_architecture_keeps_the_targets_folder():
    (only,) = module_targets(CUDA, ["sm_86"])
    assert (only.folder, only.arch) == ("cuda", "sm_86")
    assert only.flags == ("--iree-hal-target-device=cuda", "--iree-cuda-target=sm_86")


def test_several_architectures_get_a_folder_each():
    assert [(m.folder, m.flags[-1]) for m in module_targets(HIP, ["gfx942", "gfx1100"])] == [
        ("hip-gfx942", "--iree-rocm-target=gfx942"), ("hip-gfx1100", "--iree-rocm-target=gfx1100")]


def test_a_target_without_architectures_has_one_module():
    (only,) = module_targets(TARGETS["vulkan"], ["sm_86", "sm_89"])
    assert (only.folder, only.flags) == ("vulkan", ("--iree-hal-target-device=vulkan",))


def test_default_flags_name_the_default_architecture():
    assert CUDA.flags()[-1] == "--iree-cuda-target=sm_80"
    assert HIP.flags()[-1] == "--iree-rocm-target=gfx942"


@pytest.mark.parametrize("value, wanted", [
    ("sm_80", ["sm_80"]), (" sm_80 , sm_86,", ["sm_80", "sm_86"]), ("sm_90a", ["sm_90a"])])
def test_parse_archs(value, wanted):
    assert parse_archs(CUDA, value) == wanted


@pytest.mark.parametrize("target, value, message", [
    (CUDA, "", "CUDA_ARCH is empty; e.g. sm_80"),
    (CUDA, "gfx942", "CUDA_ARCH=gfx942: 'gfx942' is not a cuda architecture name (like sm_80)"),
    (CUDA, "sm_80,sm_80", "CUDA_ARCH=sm_80,sm_80: 'sm_80' is listed twice"),
    (HIP, "gfx942;rm", "HIP_ARCH=gfx942;rm: 'gfx942;rm' is not a hip architecture name"),
    (HIP, "../x", "HIP_ARCH=../x: '../x' is not a hip architecture name"),
])
def test_parse_archs_refuses(target, value, message):
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_archs(target, value)


def test_rejected_message_lists_the_accepted_ones():
    message = rejected_arch_message(CUDA, "sm_90")
    assert message.startswith("CUDA_ARCH=sm_90: IREE has no cuda target 'sm_90'; IREE 3.12 and "
                              "3.13 accept sm_60, ")
    assert "\n" not in message and "sm_89, sm_120" in message


def _probe(target, arch) -> str:
    return toolchains.target_error(toolchains.iree_compile(), target.flags(arch))


def test_iree_compile_accepts_every_known_architecture():
    wanted = [(t, a) for t in (CUDA, HIP) for a in t.known_archs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        errors = list(pool.map(lambda ta: _probe(*ta), wanted))
    assert {f"{t.name}:{a}": e for (t, a), e in zip(wanted, errors) if e} == {}


@pytest.mark.parametrize("target, arch, error", [
    (CUDA, "sm_90", "missing GPU target"),        # IREE 3.12 and 3.13 have no Hopper target
    (HIP, "gfx1102", "Unknown ROCM target 'gfx1102'"),
])
def test_iree_compile_rejects_what_the_table_leaves_out(target, arch, error):
    assert arch not in target.known_archs
    assert error in _probe(target, arch)
