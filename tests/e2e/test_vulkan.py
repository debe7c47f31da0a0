"""GLSL shaders: .glsl -> .spv named after the export, checked against the layout, run on lavapipe."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO, Project, made_once, run_module
from iree_kernels.check import runtime
from iree_kernels.core import toolchains

pytestmark = pytest.mark.skipif(toolchains.on_path("glslangValidator") is None,
                                reason="no glslangValidator (./setup.sh installs glslang-tools)")
needs_device = pytest.mark.skipif(
    "vulkan" not in runtime.available_drivers(toolchains.iree_tool("iree-run-module")),
    reason="no Vulkan device (./setup.sh installs lavapipe)")

# The project's own copy of the grid header beside it (the demo takes the package's).
SHADER = (REPO / "kernels/vulkan/elementwise.glsl").read_text().replace(
    '"iree_kernels/grid.glsl"', '"grid.glsl"')
MANIFEST = """
[models.ew]
source = "models/ew.mlir"
targets = ["vulkan"]

[models.plain]
source = "models/ew.mlir"
targets = ["vulkan"]

[models.mlp]
source = "models/mlp.mlir"
targets = ["vulkan"]

[[substitutions]]
model = "ew"
target = "vulkan"
executable = "main_dispatch_0"
file = "kernels/ew.glsl"

[[substitutions]]
model = "mlp"
target = "vulkan"
executable = "main_dispatch_1"
file = "kernels/rowsum.glsl"
"""
INPUTS = ["5xf32=1 2 3 4 5", "5xf32=10 20 30 40 50"]


@pytest.fixture
def vulkan_project(project):
    return vulkan_repo(project)


def vulkan_repo(project):
    project.copy(REPO / "models/elementwise.mlir", "models/ew.mlir")
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / "site_scons/iree_kernels/data/include/iree_kernels/grid.glsl", "kernels/grid.glsl")
    project.copy(REPO / "kernels/vulkan/mlp_bias_relu_rowsum.glsl", "kernels/rowsum.glsl")
    # a - a * b instead of a * b + a: the numbers show which kernel ran.
    project.write("kernels/ew.glsl", SHADER.replace("a[i] * b[i] + a[i]", "a[i] - a[i] * b[i]"))
    project.write("kernels/demo.toml", MANIFEST)
    return project


@pytest.fixture
def vulkan_built(tmp_path_factory, tmp_path) -> Project:
    """vulkan_repo() after its first build: built once per run, copied for each test."""
    def build(folder):
        vulkan_repo(Project(folder)).scons()
    return Project.copy_of(made_once(tmp_path_factory, "vulkan-project", build), tmp_path / "repo")


def spirv_entry_points(path) -> list[str]:
    text = subprocess.run(["spirv-dis", str(path)], capture_output=True, text=True, check=True).stdout
    return [line.split('"')[1] for line in text.splitlines() if "OpEntryPoint" in line]


def test_entry_point_is_named_after_the_export(vulkan_project):
    build = vulkan_project.scons()
    assert build.ran("SPIRV") == ["kernels/ew.glsl", "kernels/rowsum.glsl"]
    spv = vulkan_project.root / "build/vulkan/ew/main_dispatch_0.spv"
    assert spirv_entry_points(spv) == ["main_dispatch_0_elementwise_D_f32"]
    assert spirv_entry_points(vulkan_project.root / "build/kernels/ew.spv") == ["main"]
    assert spv.read_bytes() in (vulkan_project.root / "build/vulkan/ew.vmfb").read_bytes()


@needs_device
def test_substituted_shader_computes_on_lavapipe(vulkan_built):
    vulkan_project = vulkan_built
    root = vulkan_project.root
    assert run_module(root / "build/vulkan/plain.vmfb", "vulkan", "main", INPUTS) == \
        "5xf32=11 42 93 164 255"
    assert run_module(root / "build/vulkan/ew.vmfb", "vulkan", "main", INPUTS) == \
        "5xf32=-9 -38 -87 -156 -245"
    mlp_inputs = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]
    assert run_module(root / "build/vulkan/mlp.vmfb", "vulkan", "main", mlp_inputs) == \
        "4xf32=72 72 72 72"


def test_editing_an_include_rebuilds_only_its_dependants(vulkan_built):
    vulkan_project = vulkan_built
    vulkan_project.write("kernels/rowsum.glsl", vulkan_project.read("kernels/rowsum.glsl")
                         .replace('#include "iree_kernels/grid.glsl"', '#define FOR_EACH_INVOCATION(i, n) '
                                  'for (uint i = gl_LocalInvocationID.x; i < (n); i += 64)'))
    vulkan_project.scons()
    include = vulkan_project.root / "kernels/grid.glsl"
    include.write_text(include.read_text().replace("i < (n);", "i < (n) && i < 0x7fffffffu;"))
    rebuild = vulkan_project.scons()
    assert rebuild.ran("SPIRV") == ["kernels/ew.glsl"]
    assert rebuild.ran("RELINK") == ["build/vulkan/ew.vmfb"] and rebuild.ran("IREE") == []


@needs_device
def test_glslc_is_an_alternative(vulkan_project):
    build = vulkan_project.scons("GLSL_COMPILER=glslc", "VERBOSE=1")
    assert "-fshader-stage=compute" in build.stdout
    assert run_module(vulkan_project.root / "build/vulkan/ew.vmfb", "vulkan", "main", INPUTS) == \
        "5xf32=-9 -38 -87 -156 -245"


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.replace("layout(set = 0, binding = 2)", "layout(set = 1, binding = 2)"),
     "binding 2 is in descriptor set 1, expected set 0"),
    (lambda s: s.replace("layout(set = 0, binding = 1) readonly buffer B { float b[]; };", "")
                .replace("a[i] * b[i]", "a[i] * a[i]"),
     "expected 3 bindings (3 bindings [0:ro, 1:ro, 2:rw], 4 push constants), found 2"),
    (lambda s: s.replace("binding = 2) writeonly", "binding = 3) writeonly"),
     "expected bindings 0..2, found [0, 1, 3]"),
    (lambda s: s.replace("writeonly buffer Out", "readonly buffer Out").replace(
        "result[i] = a[i] * b[i] + a[i];", "float unused = result[i];"),
     "binding 2 is writable in IREE's layout, but the shader declares it readonly"),
    (lambda s: s.replace("layout(push_constant) uniform PushConstants { uint values[4]; } pc;", "")
                .replace("pc.values[0]", "64u"),
     "expected a push-constant block of at least 4 32-bit words, found none"),
    (lambda s: s.replace("uint values[4]", "uint values[2]"),
     "expected a push-constant block of at least 4 32-bit words, found 2"),
])
def test_layout_mismatch_is_refused(vulkan_project, edit, message):
    vulkan_project.write("kernels/ew.glsl", edit(SHADER))
    build = vulkan_project.scons(expect_ok=False)
    assert build.returncode != 0
    assert ("kernels/demo.toml:14: [[substitutions]] #1 (executable 'main_dispatch_0' of "
            "ew/vulkan): kernel kernels/ew.glsl (compiled to build/vulkan/ew/main_dispatch_0.spv): "
            "SPIR-V does not fit executable 'main_dispatch_0': " + message) in build.output
    assert "Traceback" not in build.output
    assert not (vulkan_project.root / "build/vulkan/ew.vmfb").exists()


def test_compile_error_names_file_and_line(vulkan_project):
    vulkan_project.write("kernels/ew.glsl", SHADER.replace("uint n = pc.values[0];", "uint n = nope;"))
    build = vulkan_project.scons(expect_ok=False)
    assert build.returncode != 0
    line = next(n for n, text in enumerate(SHADER.splitlines(), 1) if "uint n = pc.values[0];" in text)
    assert f"kernels/ew.glsl:{line}: 'nope' : undeclared identifier" in build.output
    assert not (vulkan_project.root / "build/kernels/ew.spv").exists()


def test_prebuilt_spirv_with_the_wrong_entry_point_is_refused(vulkan_built):
    vulkan_project = vulkan_built
    vulkan_project.copy(vulkan_project.root / "build/kernels/ew.spv", "kernels/prebuilt.spv")
    vulkan_project.write("kernels/demo.toml", MANIFEST.replace("kernels/ew.glsl", "kernels/prebuilt.spv"))
    build = vulkan_project.scons(expect_ok=False)
    assert ("expected a GLCompute entry point named 'main_dispatch_0_elementwise_D_f32' "
            "(the export name), found 'main'") in build.output


@pytest.mark.parametrize("content, message", [
    (b"", "kernels/prebuilt.spv: empty file; expected a SPIR-V binary"),
    (b"\x03\x02\x23\x07garbage!", "kernels/prebuilt.spv: truncated SPIR-V"),
])
def test_empty_or_corrupted_spirv_is_refused(vulkan_project, content, message):
    (vulkan_project.root / "kernels/prebuilt.spv").write_bytes(content)
    vulkan_project.write("kernels/demo.toml", MANIFEST.replace("kernels/ew.glsl", "kernels/prebuilt.spv"))
    build = vulkan_project.scons(expect_ok=False)
    assert build.returncode != 0
    assert message in build.output
    assert not (vulkan_project.root / "build/vulkan/ew.vmfb").exists()
