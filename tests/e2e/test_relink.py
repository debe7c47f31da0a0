"""RELINK=yes: a kernel edit replaces one binary in the unlinked module, and the module is what
iree-compile makes of the model with the kernel, executables unlinked: the same bytes but for
the offsets of the segments that moved (relink_projects.assert_same_module)."""
from __future__ import annotations

import pytest

from bad_inputs import PWNED
from conftest import MLP_SQUARE_RELU, REPO, SAXPY_C, Project, run_module
from relink_projects import (SAXPY_KERNELS, SAXPY_OBJECT, assert_same_module, iree_compiles_own,
                             saxpy_object_on_cuda, saxpy_wrapped)
from hostile_inputs import PAYLOAD
from iree_kernels.check import runtime
from iree_kernels.core import toolchains
from iree_kernels.ir import vmfb
from test_robustness import fake_iree_compile

KERNEL = "kernels/llvm-cpu/mlp_square_relu.mlir"
GLSL_ROWSUM = "kernels/vulkan/mlp_bias_relu_rowsum.glsl"
MLP_INPUTS = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]
MODULE = "build/llvm-cpu/mlp.vmfb"


def mlp_with_kernel(project) -> None:
    project.write("kernels/demo.toml", MLP_SQUARE_RELU)
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / KERNEL, KERNEL)


def edited(project, old: str, new: str) -> None:
    kernel = project.root / KERNEL
    text = kernel.read_text()
    assert old in text
    kernel.write_text(text.replace(old, new, 1))


def test_a_kernel_edit_relinks_the_module_and_compiles_nothing_else(project, tmp_path):
    mlp_with_kernel(project)
    clean = project.scons("RELINK=yes")
    assert clean.ran("IREE") == ["build/llvm-cpu/mlp/unlinked/mlp.vmfb"]
    assert clean.ran("RELINK") == [MODULE]
    module = project.root / MODULE
    assert_same_module(module.read_bytes(), iree_compiles_own(project, tmp_path / "reference.vmfb"))
    assert any(name.startswith("main_dispatch_1_") for name in vmfb.segment_names(
        module.read_bytes()))
    before = run_module(module, "local-sync", "main", MLP_INPUTS)

    # A changed constant: another binary, the same export ops.
    edited(project, "%sq = arith.mulf %9, %9 : f32",
           "%two = arith.constant 2.0 : f32\n          %sq = arith.mulf %9, %two : f32")
    edit = project.scons("RELINK=yes")
    assert [s.step for s in edit.steps] == ["SUBST", "BINARY", "RELINK"], edit.output
    assert "not relinked" not in edit.output
    assert_same_module(module.read_bytes(), iree_compiles_own(project, tmp_path / "reference.vmfb"))
    after = run_module(module, "local-sync", "main", MLP_INPUTS)
    assert after != before
    assert project.scons("RELINK=yes", "--question").returncode == 0

    # Other export ops (an explicit workgroup count): the host code must change, so it compiles.
    edited(project, "%x, %y, %z = iree_tensor_ext.dispatch.workgroup_count_from_slice()\n"
                    "      hal.return %x, %y, %z : index, index, index",
           "%c1 = arith.constant 1 : index\n      hal.return %c1, %c1, %c1 : index, index, index")
    misfit = project.scons("RELINK=yes")
    assert f"{KERNEL} is compiled into the module, not relinked: it translates to other " \
           "export ops" in misfit.output
    assert misfit.ran("IREE") == []           # the unlinked module of the model stays
    assert_same_module(module.read_bytes(), iree_compiles_own(project, tmp_path / "reference.vmfb"))
    # One workgroup now computes one row: kept, the old host code would have launched four.
    assert run_module(module, "local-sync", "main", MLP_INPUTS) != after
    assert not list((project.root / "build/llvm-cpu").glob(".tmp-*"))
    assert project.scons("RELINK=yes", "--question").returncode == 0


def test_with_relink_off_the_module_is_linked_as_a_plain_compile(project):
    mlp_with_kernel(project)
    project.scons("RELINK=yes")
    relinked = (project.root / MODULE).read_bytes()
    linked = project.scons("RELINK=no")
    assert linked.ran("IREE") == [MODULE]
    assert (project.root / MODULE).read_bytes() != relinked
    assert not any(name.startswith("main_dispatch_1_") for name in vmfb.segment_names(
        (project.root / MODULE).read_bytes()))


def test_a_kernel_that_does_not_compile_is_one_error_naming_its_line(project):
    mlp_with_kernel(project)
    project.scons("RELINK=yes")
    built = (project.root / MODULE).read_bytes()
    edited(project, "%sq = arith.mulf %9, %9 : f32", "%sq = arith.mulf %9, %nine : f32")
    broken = project.scons("RELINK=yes", expect_ok=False)
    assert broken.returncode != 0
    assert f"{KERNEL}:" in broken.output and "%nine" in broken.output, broken.output
    assert "Traceback" not in broken.output
    assert (project.root / MODULE).read_bytes() == built or not (project.root / MODULE).exists()
    assert project.scons("RELINK=yes", "--question", expect_ok=False).returncode != 0


GPU_TARGETS = ["vulkan"] + (["cuda"] if toolchains.nvcc() else [])


def test_a_wrapped_gpu_kernel_edit_relinks_without_compiling_the_model(project, tmp_path):
    saxpy_wrapped(project, GPU_TARGETS)
    targets = f"IREE_TARGETS={','.join(GPU_TARGETS)}"
    clean = project.scons("RELINK=yes", targets, "EXECUTABLE_CACHE=0", "-j2")
    # From the model: its executables dumped, the unlinked module with the placeholders in.
    assert clean.ran("FRONTEND") == [] and clean.ran("ASSEMBLE") == [], clean.output
    assert sorted(clean.ran("SOURCES")) == sorted(
        f"build/{t}/saxpy/executables.ops.mlir" for t in GPU_TARGETS)
    assert sorted(clean.ran("IREE")) == sorted(
        f"build/{t}/saxpy/unlinked/saxpy.vmfb" for t in GPU_TARGETS)
    for target in GPU_TARGETS:
        placeholder = project.root / f"build/{target}/saxpy/unlinked/main_dispatch_0.placeholder.mlir"
        assert "dense<[0, 0, 0, 0]>" in placeholder.read_text()
    for target in GPU_TARGETS:
        built = (project.root / f"build/{target}/saxpy.vmfb").read_bytes()
        assert_same_module(built, iree_compiles_own(project, tmp_path / f"{target}.vmfb", target,
                                                    "saxpy"))
    for target in GPU_TARGETS:
        kernel = project.root / SAXPY_KERNELS[target][0]
        kernel.write_text(kernel.read_text().replace("2.0", "3.0", 1))
    edit = project.scons("RELINK=yes", targets, "EXECUTABLE_CACHE=0", "-j2")
    assert sorted(edit.ran("RELINK")) == sorted(f"build/{t}/saxpy.vmfb" for t in GPU_TARGETS)
    assert not {"FRONTEND", "SOURCES", "ASSEMBLE", "IREE"} & {s.step for s in edit.steps}, \
        edit.output
    for target in GPU_TARGETS:
        built = project.root / f"build/{target}/saxpy.vmfb"
        assert_same_module(built.read_bytes(), iree_compiles_own(
            project, tmp_path / f"{target}.vmfb", target, "saxpy"))
    assert project.scons("RELINK=yes", targets, "EXECUTABLE_CACHE=0", "--question").returncode == 0
    if "vulkan" not in runtime.available_drivers(toolchains.iree_tool("iree-run-module")):
        pytest.skip("no Vulkan device here to run the relinked module")
    out = run_module(project.root / "build/vulkan/saxpy.vmfb", "vulkan", "main",
                     ["4xf32=1 2 3 4", "4xf32=1 1 1 1"])
    assert "4 7 10 13" in out, out


@pytest.mark.skipif(not toolchains.nvcc(), reason="needs nvcc")
@pytest.mark.parametrize("cache", ["cuda", "0"])
def test_an_object_kernel_on_cuda_relinks_with_iree_s_launch_shape(project, tmp_path, cache):
    saxpy_object_on_cuda(project)
    clean = project.scons("RELINK=yes", "IREE_TARGETS=cuda", f"EXECUTABLE_CACHE={cache}")
    # Without the codegen cache, from the model: its front end's program is not made.
    assert bool(clean.ran("FRONTEND")) == (cache == "cuda"), clean.output
    module = project.root / "build/cuda/saxpy.vmfb"
    reference = tmp_path / "own.vmfb"
    assert_same_module(module.read_bytes(), iree_compiles_own(project, reference, "cuda", "saxpy"),
                       debug_lines=True)
    kernel = project.root / SAXPY_OBJECT
    kernel.write_text(kernel.read_text().replace("2.0f", "3.0f"))
    edit = project.scons("RELINK=yes", "IREE_TARGETS=cuda", f"EXECUTABLE_CACHE={cache}")
    assert edit.ran("RELINK") == ["build/cuda/saxpy.vmfb"]
    assert not {"FRONTEND", "SOURCES", "ASSEMBLE", "IREE"} & {s.step for s in edit.steps}, \
        edit.output
    assert_same_module(module.read_bytes(), iree_compiles_own(project, reference, "cuda", "saxpy"),
                       debug_lines=True)
    assert project.scons("RELINK=yes", "IREE_TARGETS=cuda", f"EXECUTABLE_CACHE={cache}",
                         "--question").returncode == 0


def test_a_c_kernel_on_llvm_cpu_relinks_and_computes_the_edit(project, tmp_path):
    """A wrapped C kernel: the unlinked module is compiled with the wrapper stripped of its
    objects and the calls to them (the placeholder); the wrapper compiled alone, linking the
    kernel, is the binary relinked."""
    project.write("kernels/saxpy.toml", SAXPY_C)
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.c")
    clean = project.scons("IREE_TARGETS=llvm-cpu")
    assert clean.ran("RELINK") == ["build/llvm-cpu/saxpy.vmfb"], clean.output
    assert not clean.ran("FRONTEND") and not clean.ran("ASSEMBLE"), clean.output
    placeholder = project.read("build/llvm-cpu/saxpy/unlinked/main_dispatch_0.placeholder.mlir")
    assert "objects(" not in placeholder and "@saxpy" not in placeholder
    kernel = project.root / "kernels/saxpy.c"
    kernel.write_text(kernel.read_text().replace("2.0f * x[i]", "3.0f * x[i]"))
    edit = project.scons("IREE_TARGETS=llvm-cpu")
    assert edit.ran("RELINK") == ["build/llvm-cpu/saxpy.vmfb"]
    assert not {"FRONTEND", "SOURCES", "ASSEMBLE", "IREE"} & {s.step for s in edit.steps}, \
        edit.output
    module = project.root / "build/llvm-cpu/saxpy.vmfb"
    assert_same_module(module.read_bytes(), iree_compiles_own(
        project, tmp_path / "own.vmfb", "llvm-cpu", "saxpy", by_name=True))
    out = run_module(module, "local-sync", "main", ["4xf32=1 2 3 4", "4xf32=1 1 1 1"])
    assert "4 7 10 13" in out, out
    assert project.scons("IREE_TARGETS=llvm-cpu", "--question").returncode == 0


def test_a_scaffolded_c_kernel_relinks_into_a_model_of_several_executables(project, tmp_path):
    """The other executable's binary and the host code are the unlinked module's: the module is
    iree-compile's with the kernel."""
    project.write("kernels/demo.toml", '[models.mlp]\nsource = "models/mlp.mlir"\n'
                  'targets = ["llvm-cpu"]\n')
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_0", "LANGUAGE=c",
                  "SCAFFOLD_MANIFEST=kernels/scaffolded.toml")
    kernel, = (project.root / "kernels").rglob("*.c")
    clean = project.scons()
    assert clean.ran("RELINK") == [MODULE], clean.output
    assert_same_module((project.root / MODULE).read_bytes(), iree_compiles_own(
        project, tmp_path / "own.vmfb", by_name=True))
    marker = "// TODO: compute this workgroup's share of the outputs from the inputs."
    assert marker in kernel.read_text()
    kernel.write_text(kernel.read_text().replace(
        marker, "{ volatile int edit = 1; (void)edit; }\n    " + marker))
    edit = project.scons()
    assert edit.ran("RELINK") == [MODULE] and not edit.ran("IREE"), edit.output
    assert_same_module((project.root / MODULE).read_bytes(), iree_compiles_own(
        project, tmp_path / "own.vmfb", by_name=True))


def test_a_fallback_compile_that_fails_in_a_checkout_named_like_code_runs_nothing(tmp_path,
                                                                                  monkeypatch):
    """Alone, the kernel crashes iree-compile; the module's compile from the model with the
    substitution flags then fails: its explanation names the model, whose path holds the
    checkout's, and runs none of it."""
    project = Project(tmp_path / PAYLOAD / "repo")
    mlp_with_kernel(project)
    fake_iree_compile(tmp_path, monkeypatch, """\
if '--compile-mode=hal-executable' in sys.argv:
    os.kill(os.getpid(), signal.SIGSEGV)
if any(a.endswith('substitutions.flags') for a in sys.argv) and \\
        '--iree-hal-link-executables=false' in sys.argv:
    sys.exit(print('error: the fallback compile fails', file=sys.stderr) or 1)""")
    build = project.scons(expect_ok=False)
    assert build.returncode == 2 and "Traceback" not in build.output, build.output
    assert "is compiled into the module, not relinked: iree-compile crashed (SIGSEGV)" \
        in build.output
    assert ("scons: *** [build/llvm-cpu/mlp.vmfb] iree-compile failed for model 'mlp' on "
            "llvm-cpu: error: the fallback compile fails") in build.output
    assert not (project.root / MODULE).exists()
    assert not list(tmp_path.rglob(PWNED))


def test_a_compile_from_the_model_that_fails_names_the_executable(tmp_path, monkeypatch):
    """IREE's errors in a compile from the model point into the model; the line names the
    executable where IREE's own program fails (a fake iree-compile fails main_dispatch_0's
    codegen), as a compile from the front end's program does, and nothing is left built; in a
    checkout whose path holds code, none of it runs."""
    project = Project(tmp_path / PAYLOAD / "repo")
    mlp_with_kernel(project)
    fake_iree_compile(tmp_path, monkeypatch, """\
def fail(where):
    sys.exit(print(f"{where}: error: 'func.func' op failed to distribute", file=sys.stderr) or 1)
if any(a.startswith('--iree-hal-dump-executable-sources-to=') for a in sys.argv):
    fail('models/mlp.mlir:5:3')
if '--compile-from=executable-sources' in sys.argv and '-explain-' in sys.argv[1]:
    lines = open(sys.argv[1]).read().split('\\n')
    at = lines.index('  hal.executable private @main_dispatch_0 {') + 3
    fail(f'{sys.argv[1]}:{at}:7')""")
    build = project.scons(expect_ok=False)
    assert build.returncode == 2 and "Traceback" not in build.output, build.output
    assert ("IREE's llvm-cpu codegen fails for 1 executable(s) of model 'mlp': main_dispatch_0 "
            "(export main_dispatch_0_") in build.output, build.output
    assert "failed to distribute" in project.read("build/llvm-cpu/mlp/compile-errors.log")
    assert not (project.root / MODULE).exists()
    assert not list((project.root / "build").rglob(".tmp-*"))
    assert not list(tmp_path.rglob(PWNED))


def test_an_option_value_iree_compile_rejects_is_named_at_its_manifest_line(project):
    """The unlinked module's compile from the model reads the manifest's options first."""
    mlp_with_kernel(project)
    project.write("kernels/demo.toml", MLP_SQUARE_RELU.replace(
        'targets = ["llvm-cpu"]\n', 'targets = ["llvm-cpu"]\noptions = { llvm-cpu = '
        '["--iree-opt-level=O9"] }\n', 1))
    build = project.scons(expect_ok=False)
    assert build.returncode == 2 and "Traceback" not in build.output
    assert ("kernels/demo.toml:4: models.mlp: field 'options': options.llvm-cpu: iree-compile: "
            "iree-compile: for the --iree-opt-level option: 'O9' value not a valid") in build.output, build.output
    assert not (project.root / "build/llvm-cpu/mlp/unlinked/mlp.vmfb").exists()


MATMUL_F16 = """\
func.func @main(%a: tensor<256x256xf16>, %b: tensor<256x256xf16>) -> tensor<256x256xf16> {
  %z = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<256x256xf16>
  %f = linalg.fill ins(%z : f16) outs(%e : tensor<256x256xf16>) -> tensor<256x256xf16>
  %r = linalg.matmul ins(%a, %b : tensor<256x256xf16>, tensor<256x256xf16>)
                     outs(%f : tensor<256x256xf16>) -> tensor<256x256xf16>
  return %r : tensor<256x256xf16>
}
"""
# Not the matmul: what matters is that it links where IREE's own code would.
MATMUL_GLSL = """\
#version 450
layout(local_size_x = 64, local_size_y = 2) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };
void main() { c[gl_WorkGroupID.x] = a[0] + b[0]; }
"""


# mlp's row sum as the demo has it; a cooperative-matrix matmul on rdna3, whose export records
# a subgroup size, which an object's variant does not carry.
@pytest.mark.parametrize("model, executable, kernel, options", [
    ("mlp", "main_dispatch_1", GLSL_ROWSUM, []),
    ("matmul", "main_dispatch_0", "kernels/vulkan/matmul.glsl", ["--iree-vulkan-target=rdna3"])])
def test_an_object_kernel_on_vulkan_relinks_as_iree_compile_substitutes_it(
        project, tmp_path, model, executable, kernel, options):
    project.write("kernels/demo.toml", f"""\
[models.{model}]
source = "models/{model}.mlir"
targets = ["vulkan"]
options = {{ vulkan = {options!r} }}

[[substitutions]]
model = "{model}"
target = "vulkan"
executable = "{executable}"
file = "{kernel}"
""".replace("'", '"'))
    if model == "mlp":
        project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
        project.copy(REPO / kernel, kernel)
    else:
        project.write(f"models/{model}.mlir", MATMUL_F16)
        project.write(kernel, MATMUL_GLSL)
    built = f"build/vulkan/{model}.vmfb"
    clean = project.scons("IREE_TARGETS=vulkan")
    assert clean.ran("FRONTEND") == [] and clean.ran("ASSEMBLE") == [], clean.output
    assert clean.ran("RELINK") == [built], clean.output
    module, reference = project.root / built, tmp_path / "own.vmfb"
    assert_same_module(module.read_bytes(),
                       iree_compiles_own(project, reference, "vulkan", model, by_name=True))
    source = project.root / kernel
    text = source.read_text()
    source.write_text(text.replace("max(", "min(", 1) if "max(" in text else
                      text.replace("a[0] + b[0]", "a[0] * b[0]"))
    edit = project.scons("IREE_TARGETS=vulkan")
    assert edit.ran("RELINK") == [built]
    assert not {"FRONTEND", "SOURCES", "ASSEMBLE", "IREE"} & {s.step for s in edit.steps}, \
        edit.output
    assert_same_module(module.read_bytes(),
                       iree_compiles_own(project, reference, "vulkan", model, by_name=True))
    assert project.scons("IREE_TARGETS=vulkan", "--question").returncode == 0
