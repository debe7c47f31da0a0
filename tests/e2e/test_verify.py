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

from conftest import REPO, SAXPY_C

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
    from iree_kernels.ir.executables import read_executables
    from iree_kernels.ir.program import Program
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
    # The kernel's harness is compiled again; IREE's, which the edit does not change, is not.
    kernels_harness = [t for t in build.ran("HARNESS") if t.endswith(".verify.json")]
    assert any(t.endswith(".iree.vmfb") for t in build.ran("HARNESS"))
    assert failed.ran("HARNESS") == kernels_harness
    assert failed.ran("VERIFY")
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
    from iree_kernels.check import runtime
    from iree_kernels.core import toolchains
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


SAXPY = "\n" + SAXPY_C


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
    project.scons("bench", "IREE_BENCHMARKFLAGS=--benchmark_repetitions=1 --benchmark_min_time=1x --batch_size=2")
    timed, = json.loads(project.read("build/llvm-cpu/saxpy/microbenchmarks.json"))
    assert timed["plain_us"] > 0 and timed["substituted_us"] > 0
    assert timed["shapes"] == "the input shapes of [[case]] #1 in models/saxpy.expected.toml"

    # The last item of every workgroup's slice left out: 5 of the 5000.
    project.write("kernels/saxpy.c", kernel.replace("i < end; ++i", "i + 1 < end; ++i"))
    failed = project.scons("verify", expect_ok=False)
    assert "binding 2 (output 5000xf32 at byte 0): element [1023] is" in failed.output, \
        failed.output
    assert "5 of 5000 elements still hold their input value" in failed.output


# The same 16x16 matmul three times in a row: IREE makes one executable of it, dispatched at
# three sites on one transient buffer, the binding offsets passed as push constants.
LAYERS = "func.func @main(%a: tensor<16x16xf32>, %w: tensor<16x16xf32>) -> tensor<16x16xf32> {\n" \
    "  %zero = arith.constant 0.0 : f32\n  %empty = tensor.empty() : tensor<16x16xf32>\n" \
    "  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<16x16xf32>) -> tensor<16x16xf32>\n" \
    + "".join(f"  %t{i} = linalg.matmul ins(%{x}, %w : tensor<16x16xf32>, tensor<16x16xf32>) "
              f"outs(%init : tensor<16x16xf32>) -> tensor<16x16xf32>\n"
              for i, x in enumerate(["a", "t0", "t1"])) + "  return %t2 : tensor<16x16xf32>\n}\n"
LAYERS_MANIFEST = """
[models.layers]
source = "models/layers.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "layers"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/matmul.c"
workgroup_count = [1, 1, 1]
"""
# Sums in the other order from IREE's: a few ulps apart, within the default tolerance.
MATMUL_C = """#include <stddef.h>
#include <stdint.h>

void matmul(const float *a, const float *w, float *out, uint32_t a_offset, uint32_t out_offset,
            size_t id_x, size_t id_y, size_t id_z, size_t count_x, size_t count_y, size_t count_z) {
  a += a_offset / sizeof(float);
  out += out_offset / sizeof(float);
  for (int i = 0; i < 16; ++i)
    for (int j = 0; j < 16; ++j) {
      float sum = 0.0f;
      for (int k = 15; k >= 0; --k) sum += a[i * 16 + k] * w[k * 16 + j];
      out[i * 16 + j] = sum;
    }
  WRONG
}
"""


def test_an_executable_dispatched_at_several_sites_is_checked_at_each(project):
    from iree_kernels.ir.executables import read_executables
    from iree_kernels.ir.program import Program
    project.write("models/layers.mlir", LAYERS)
    project.write("kernels/layers.toml", LAYERS_MANIFEST)
    project.write("kernels/matmul.c", MATMUL_C.replace("WRONG", ""))
    build = project.scons("verify")
    text = project.read("build/llvm-cpu/layers/executables.mlir")
    with Program(text) as program:
        sites = program.dispatch_sites()["main_dispatch_0"]
    assert [s.constants for s in sites] == [(0, 0), (0, 1024), (1024, 0)]
    executable, = read_executables(text).values()
    assert [s.offset for s in executable.subspans if s.binding != 1] == [
        "from push constant 0", "from push constant 1"]
    assert "matched IREE's executable on local-sync (3 dispatch(es))" in build.output, build.output

    # Wrong where it writes at byte 1024 only: the second site.
    project.write("kernels/matmul.c", MATMUL_C.replace("WRONG", "if (out_offset) out[5] += 1;"))
    failed = project.scons("verify", expect_ok=False)
    assert ("at dispatch site 2 of 3 (in @main, push constants 0, 1024): binding 2 (output "
            "16x16xf32 at byte 1024): element [0, 5] is") in failed.output, failed.output
    assert "1 of 256 elements differ" in failed.output

    # The offset ignored: right at the site whose offsets are 0, wrong at the others.
    project.write("kernels/matmul.c", MATMUL_C.replace("WRONG", "").replace(
        "out += out_offset", "out += 0 * out_offset"))
    failed = project.scons("verify", expect_ok=False)
    assert "at dispatch site 2 of 3" in failed.output and "did not write them" in failed.output


NAN_MODEL = """func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
  %two = arith.constant dense<2.0> : tensor<1024xf32>
  %below = arith.subf %x, %two : tensor<1024xf32>
  %root = math.sqrt %below : tensor<1024xf32>
  return %root : tensor<1024xf32>
}
"""
NAN_MANIFEST = """
[models.roots]
source = "models/roots.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "roots"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/roots.c"
workgroup_count = [1, 1, 1]
"""
# sqrt(x - 2) of inputs in [-1, 1]: a NaN everywhere, here with a payload IREE's has not.
NAN_C = """#include <stddef.h>
#include <stdint.h>

void roots(const float *x, float *out, size_t id_x, size_t id_y, size_t id_z,
           size_t count_x, size_t count_y, size_t count_z) {
  for (int i = 0; i < 1024; ++i) out[i] = x[i] < 2.0f ? __builtin_nanf("0x123") : 0.0f;
}
"""


def test_nans_match_nans_whatever_their_payload_unless_bitwise(project):
    project.write("models/roots.mlir", NAN_MODEL)
    project.write("kernels/roots.toml", NAN_MANIFEST)
    project.write("kernels/roots.c", NAN_C)
    assert "matched IREE's executable" in project.scons("verify").output

    project.write("kernels/roots.toml", NAN_MANIFEST + "bitwise = true\n")
    failed = project.scons("verify", expect_ok=False)
    assert re.search(r"binding 1 \(output 1024xf32 at byte 0\): element \[0\] is nan, expected "
                     r"nan .*1024 of 1024 elements differ \(bitwise\)", failed.output), failed.output

    # A number where IREE's executable makes a NaN is wrong whatever the tolerance.
    project.write("kernels/roots.toml", NAN_MANIFEST + "atol = 10\n")
    project.write("kernels/roots.c", NAN_C.replace('__builtin_nanf("0x123")', "0.0f"))
    failed = project.scons("verify", expect_ok=False)
    assert "element [0] is 0.0, expected nan" in failed.output, failed.output


def test_a_c_kernel_defining_another_function_fails_at_its_check_listing_them(project):
    project.write("models/layers.mlir", LAYERS)
    project.write("kernels/layers.toml", LAYERS_MANIFEST)
    project.write("kernels/matmul.c", MATMUL_C.replace("WRONG", "").replace(
        "void matmul(", "static int helper(void) { return 0; }\nvoid matmul_16x16("))
    failed = project.scons("verify", expect_ok=False)
    assert ("kernel kernels/matmul.c (compiled to build/kernels/matmul.o): defines no function "
            "'matmul', which the wrapper imports (the manifest's function, default: the kernel "
            "file's stem); the functions it defines: matmul_16x16; set function = "
            "\"matmul_16x16\" in the manifest") in failed.output, failed.output
    assert "undefined symbol" not in failed.output and not failed.ran("VERIFY")

    project.write("kernels/layers.toml", LAYERS_MANIFEST + 'function = "matmul_16x16"\n')
    assert "matched IREE's executable" in project.scons("verify").output
