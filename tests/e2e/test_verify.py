"""End to end: differential checks (scons verify) run a kernel and IREE's executable on the same bytes.

The dispatch is a real one: squeezenet's first max pool (3x3, stride 2), whose
output IREE packs 3,154,176 bytes into its buffer. A kernel that ignores that
offset, covers part of the launch grid, or is a few ulps off fails, and the
message says where.
"""
from __future__ import annotations

import importlib.util
import json
import re

import pytest

from conftest import REPO

pytest.importorskip("onnx")

EXPORT = "*_conv_64x55x55x3x3_f32"
MODEL = """
[models.squeezenet]
source = "models/squeezenet.onnx"
targets = [{targets}]
"""
SUBSTITUTION = """
[[substitutions]]
model = "squeezenet"
target = "{target}"
export = "{export}"
file = "{file}"
"""
# Wrapped on Vulkan with its own launch shape: one invocation per output element.
MAX_POOL_GLSL = """#version 450
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer In { float x[]; };
layout(set = 0, binding = 1) writeonly buffer Out { float y[]; };

void main() {
  uint i = gl_GlobalInvocationID.x;
  if (i >= 64u * 55u * 55u) return;
  uint c = i / 3025u, row = (i / 55u) % 55u, column = i % 55u;
  float m = -1.0 / 0.0;
  for (uint dy = 0u; dy < 3u; ++dy)
    for (uint dx = 0u; dx < 3u; ++dx)
      m = max(m, x[c * 12321u + (2u * row + dy) * 111u + 2u * column + dx]);
  y[OFFSET + i] = m;
}
"""


def _squeezenet(project) -> None:
    spec = importlib.util.spec_from_file_location("fetch", REPO / "models/fetch_onnx_models.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    fetch.main(["--out", str(project.root / "models"), "--strip-softmax", "squeezenet"])


def _iree_source(project, target: str) -> str:
    """IREE's own source of the max pool, as scons dump writes it."""
    from iree_kernels.executables import read_executables
    from iree_kernels.program import Program
    project.scons(f"build/{target}/squeezenet/executables.mlir")
    text = project.read(f"build/{target}/squeezenet/executables.mlir")
    name, = [n for n, e in read_executables(text).items()
             if e.export.name.endswith(EXPORT.lstrip("*"))]
    with Program(text) as program:
        return program.executable_text(name)


def test_a_faithful_copy_matches_and_broken_ones_fail_saying_where(project):
    _squeezenet(project)
    project.write("kernels/net.toml", MODEL.format(targets='"llvm-cpu"'))
    source = _iree_source(project, "llvm-cpu")
    assert "offset(%c3154176)" in source
    project.write("kernels/max_pool.mlir", source)
    entry = SUBSTITUTION.format(target="llvm-cpu", export=EXPORT, file="kernels/max_pool.mlir")
    project.write("kernels/net.toml", MODEL.format(targets='"llvm-cpu"') + entry + "ulp = 0\n")

    build = project.scons("verify")
    assert len(build.ran("VERIFY")) == 1
    assert "matched IREE's executable on local-sync" in build.output
    assert project.scons("verify").ran("VERIFY") == []         # up to date

    # Writing the output at the start of its binding, not at IREE's offset.
    project.write("kernels/max_pool.mlir", re.sub(
        r"(binding\(1\)[^\n]*?offset\()%c3154176", r"\1%c0", source, count=1))
    failed = project.scons("verify", expect_ok=False)
    assert failed.returncode != 0
    assert failed.ran("HARNESS") and failed.ran("VERIFY")
    assert "differential check failed for squeezenet/llvm-cpu" in failed.output
    assert "binding 1 (output 64x55x55xf32 at byte 3154176)" in failed.output
    assert "did not write them; instead it wrote" in failed.output
    assert "(does it ignore the byte offset 3154176?)" in failed.output

    # A few ulps off: within the default tolerance, not within ulp = 0.
    nudged = re.sub(r"(%\w+) = arith\.maximumf ([^\n]*?) : f32\n(\s*)linalg\.yield \1 : f32",
                    r"\1 = arith.maximumf \2 : f32\n\3%nudge = arith.mulf \1, %cst_nudge : f32\n"
                    r"\3linalg.yield %nudge : f32", source)
    nudged = re.sub(r"(func\.func @[^\n]*\{\n)", r"\1    %cst_nudge = arith.constant 1.00000012 : f32\n",
                    nudged, count=1)
    assert "%nudge" in nudged
    project.write("kernels/max_pool.mlir", nudged)
    failed = project.scons("verify", expect_ok=False)
    assert re.search(r"element \[\d+, \d+, \d+\] is \S+, expected \S+ \(difference \S+, \d+ ulp\)",
                     failed.output), failed.output
    assert "(exact)" in failed.output
    project.write("kernels/net.toml", MODEL.format(targets='"llvm-cpu"') + entry)
    assert "matched IREE's executable" in project.scons("verify").output


def test_a_kernel_covering_part_of_the_grid_fails_on_vulkan(project):
    from iree_kernels import runtime, toolchains
    if "vulkan" not in runtime.available_drivers(toolchains.iree_tool("iree-run-module")):
        pytest.skip("no Vulkan device (lavapipe) here")
    _squeezenet(project)
    project.write("kernels/max_pool.glsl", MAX_POOL_GLSL.replace("OFFSET", "788544u"))
    entry = SUBSTITUTION.format(target="vulkan", export=EXPORT, file="kernels/max_pool.glsl")
    launch = 'mode = "wrapped"\nworkgroup_size = [64]\nworkgroup_count = [{count}, 1, 1]\n'
    project.write("kernels/net.toml", MODEL.format(targets='"vulkan"') + entry
                  + launch.format(count=3025) + "ulp = 0\n")
    build = project.scons("check")             # check runs the differential checks too
    assert "matched IREE's executable on vulkan" in build.output

    project.write("kernels/net.toml", MODEL.format(targets='"vulkan"') + entry
                  + launch.format(count=55) + "ulp = 0\n")
    failed = project.scons("check", expect_ok=False)
    assert "differential check failed for squeezenet/vulkan" in failed.output
    assert ("190080 of 193600 elements still hold their input value: the kernel did not write "
            "them (a launch grid that covers part of the output?)") in failed.output, failed.output


SAXPY = """
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/saxpy.c"
workgroup_count = ["ceildiv(w0, 1024)"]
"""


def test_dynamic_shapes_are_checked_at_the_expected_outputs_input_shapes(project):
    for path in ("models/saxpy.mlir", "models/saxpy.expected.toml", "models/saxpy/x.npy",
                 "models/saxpy/y.npy", "models/saxpy/out.npy"):
        project.copy(REPO / path, path)
    kernel = (REPO / "kernels/cpu/saxpy.c").read_text()
    project.write("kernels/saxpy.c", kernel)
    project.write("kernels/demo.toml", SAXPY)
    build = project.scons("verify")
    assert ("matched IREE's executable on local-sync (1 dispatch(es))" in build.output
            and "the input shapes of [[case]] #1 in models/saxpy.expected.toml" in build.output), \
        build.output

    # scons bench times the dynamic dispatch at the same shapes.
    project.scons("bench", "IREE_BENCHMARKFLAGS=--benchmark_repetitions=1 --batch_size=2")
    timed, = json.loads(project.read("build/llvm-cpu/saxpy/microbenchmarks.json"))
    assert timed["plain_us"] > 0 and timed["substituted_us"] > 0
    assert timed["shapes"] == "the input shapes of [[case]] #1 in models/saxpy.expected.toml"

    # The last item of every workgroup's slice left out: 5 of the 5000.
    project.write("kernels/saxpy.c", kernel.replace("i < end; ++i", "i + 1 < end; ++i"))
    failed = project.scons("verify", expect_ok=False)
    assert "binding 2 (output 5000xf32 at byte 0): element [1023] is" in failed.output, \
        failed.output
    assert "5 of 5000 elements still hold their input value" in failed.output
