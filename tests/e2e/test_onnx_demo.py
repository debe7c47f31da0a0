"""The demo's real networks: squeezenet and alexnet from ONNX, with hand kernels filled into scaffolds.

kernels/onnx.toml substitutes squeezenet's first max pool and alexnet's first
local response normalization, on llvm-cpu (C, wrapped) and Vulkan (GLSL),
selected by export pattern. ``scons check`` compares each module's logits
with what IREE's plain llvm-cpu compile returns for a seeded-noise input
(models/generate_onnx_expected.py). A kernel that reads one pixel off, or
writes without its binding's byte offset, fails the check with a message
naming the model. (An LRN reading the input for its squares is not caught by
the model's outputs: with alpha 1e-4 the light model's LRN scales by less than
0.1%, and its splat weights make every channel alike; the differential check,
scons verify, catches it.) squeezenet's case runs on llvm-cpu only: lavapipe takes over ten
minutes for IREE's SPIR-V of it (its Vulkan module runs in tests/gpu).
"""
from __future__ import annotations

import json
import re
import shutil

import pytest

from conftest import REPO, Project, made_once
from iree_kernels.check import runtime
from iree_kernels.core import toolchains

RUN_MODULE = toolchains.iree_tool("iree-run-module")
MODELS = ("squeezenet", "bvlc_alexnet")
KERNELS = ("vulkan/squeezenet_maxpool.glsl", "llvm-cpu/squeezenet_maxpool.c",
           "vulkan/alexnet_lrn.glsl", "llvm-cpu/alexnet_lrn.c")
EXPORTS = {"squeezenet": "squeezenet$async_dispatch_1_conv_64x55x55x3x3_f32",
           "bvlc_alexnet": "bvlc_alexnet$async_dispatch_1_conv_96x54x54x5_f32"}
CLANG = toolchains.on_path("clang") is not None
VULKAN = "vulkan" in runtime.available_drivers(RUN_MODULE) and \
    bool(toolchains.on_path("glslangValidator"))
needs_clang = pytest.mark.skipif(not CLANG, reason="needs clang")
needs_vulkan = pytest.mark.skipif(not VULKAN, reason="needs a Vulkan device and glslangValidator")


def make(project):
    project.copy(REPO / "kernels/onnx.toml", "kernels/onnx.toml")
    for kernel in KERNELS:
        project.copy(REPO / "kernels" / kernel, f"kernels/{kernel}")
    for name in MODELS:
        for file in (f"{name}.onnx", f"{name}.expected.toml", f"{name}/output.npy"):
            project.copy(REPO / "models" / file, f"models/{file}")
    shutil.copytree(REPO / "models/onnx_input", project.root / "models/onnx_input")


@pytest.fixture
def built(tmp_path_factory, tmp_path) -> Project:
    """make()'s repo with its modules built for llvm-cpu and vulkan (those this machine can
    build): made once per run, copied for each test; an edited kernel is then compiled alone."""
    targets = ",".join(t for t, can in (("llvm-cpu", CLANG), ("vulkan", VULKAN)) if can)

    def build(folder):
        project = Project(folder)
        make(project)
        project.scons(f"IREE_TARGETS={targets}", "-j2", "modules")
    return Project.copy_of(made_once(tmp_path_factory, f"onnx-demo-{targets}", build),
                           tmp_path / "repo")


def edit(project, kernel: str, old: str, new: str) -> None:
    path = project.root / "kernels" / kernel
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


def failed_check(project, target: str) -> str:
    """The expected-output check's error (-k: the differential check fails too, in any order)."""
    build = project.scons(f"IREE_TARGETS={target}", "-j2", "-k", "check", expect_ok=False)
    assert build.returncode == 2 and "Traceback" not in build.output, build.output
    return next(line for line in build.output.splitlines()
                if line.startswith("scons: ***") and ".check]" in line)


@needs_clang
@needs_vulkan
def test_the_hand_kernels_land_on_their_exports_and_check(built):
    project = built
    build = project.scons("IREE_TARGETS=llvm-cpu,vulkan", "-j2", "modules", "check")
    for name in MODELS:
        for target in ("llvm-cpu", "vulkan"):
            landed = json.loads(project.read(f"build/{target}/{name}/substitutions.json"))
            assert [s["export"] for s in landed["substitutions"]] == [EXPORTS[name]]
    for module in ("llvm-cpu/squeezenet", "llvm-cpu/bvlc_alexnet", "vulkan/bvlc_alexnet"):
        assert f"check: build/{module}.vmfb: 1 case(s) of" in build.output


@needs_clang
def test_a_max_pool_one_pixel_off_fails_the_check_naming_the_model(built):
    project = built
    edit(project, "llvm-cpu/squeezenet_maxpool.c", "window[dy * 111 + dx]", "window[dy * 111 + dx + 1]")
    error = failed_check(project, "llvm-cpu")
    assert error.startswith("scons: *** [build/llvm-cpu/squeezenet.check] "
                            "models/squeezenet.expected.toml: [[case]] #1: "
                            "build/llvm-cpu/squeezenet.vmfb on device 'local-sync' does not "
                            "produce the expected outputs of @squeezenet"), error


@needs_vulkan
def test_an_lrn_shader_ignoring_its_output_offset_fails_the_check_naming_the_model(built):
    project = built
    edit(project, "vulkan/alexnet_lrn.glsl", "const uint BINDING1_START = 2286144u / 4u;",
         "const uint BINDING1_START = 0u;")
    error = failed_check(project, "vulkan")
    assert error.startswith("scons: *** [build/vulkan/bvlc_alexnet.check] "
                            "models/bvlc_alexnet.expected.toml: [[case]] #1: "
                            "build/vulkan/bvlc_alexnet.vmfb on device 'vulkan' does not "
                            "produce the expected outputs of @bvlc_alexnet"), error


@needs_vulkan
def test_an_lrn_shader_reading_the_wrong_tensor_passes_the_model_check_but_not_verify(built):
    project = built
    edit(project, "vulkan/alexnet_lrn.glsl", "const uint SQUARES_START = 1119744u / 4u;",
         "const uint SQUARES_START = 0u;")
    # verify's inputs are finite, in [-1, 1]: there the LRN's scaling (alpha 1e-4) makes the
    # squares and the input differ by less than the default tolerance (atol 1e-4), so this
    # check asks for outputs within 8 ulp to see the wrong tensor.
    edit(project, "../kernels/onnx.toml", 'file = "kernels/vulkan/alexnet_lrn.glsl"',
         'file = "kernels/vulkan/alexnet_lrn.glsl"\nulp = 8')
    build = project.scons("IREE_TARGETS=vulkan", "-k", "check", expect_ok=False)
    assert "check: build/vulkan/bvlc_alexnet.vmfb: 1 case(s) of" in build.output   # unnoticed
    # The seeded inputs make it the same element every time.
    assert re.search(r"differential check failed for bvlc_alexnet/vulkan bvlc_alexnet\$async_dispatch_1 "
                     r"\(kernels/vulkan/alexnet_lrn.glsl, [^)]*\) on vulkan: binding 1 "
                     r"\(output 96x54x54xf32 at byte 2286144\): element \[\d+, \d+, \d+\] is \S+, "
                     r"expected \S+ \(difference \S+, \d+ ulp\)", build.output), build.output
