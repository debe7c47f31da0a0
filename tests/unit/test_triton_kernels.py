"""Triton kernels: the ABI mapping onto an executable's layout, the metadata checks, the
scratch parameters stripped from the LLVM IR (no Triton needed)."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from iree_kernels.kinds import triton_kernels as tk
from iree_kernels.ir.executables import Binding, Executable, Export, Layout, Subspan
from iree_kernels.project.records import Origin, Substitution
from iree_kernels.kinds.triton_kernels import Param, TritonError

SPEC = {"function": "saxpy", "executable": "main_dispatch_0", "bindings": ["fp32", "fp32", "fp16"],
        "constants": 2, "constexprs": {"BLOCK": 256}}


def params(*names: str, constexpr=("BLOCK",), annotations=None, defaults=()) -> list[Param]:
    annotations = annotations or {}
    return [Param(n, n in constexpr, annotations.get(n, "tl.constexpr" if n in constexpr else ""),
                  n in defaults) for n in names]


def test_pointers_take_the_bindings_types_and_scalars_are_i32():
    sig, constexprs = tk.signature(params("x", "y", "out", "n_lo", "n_hi", "BLOCK"), SPEC)
    assert sig == {"x": "*fp32", "y": "*fp32", "out": "*fp16", "n_lo": "i32", "n_hi": "i32",
                   "BLOCK": "constexpr"}
    assert constexprs == {"BLOCK": 256}


def test_an_annotated_pointer_keeps_its_type():
    sig, _ = tk.signature(params("x", "y", "out", "a", "b", "BLOCK",
                                 annotations={"out": "*bf16", "a": "u32"}), SPEC)
    assert sig["out"] == "*bf16" and sig["a"] == "u32"


@pytest.mark.parametrize("names, expected", [
    (("x", "y", "out", "n", "BLOCK"), "takes 4 parameters that are not tl.constexpr (x, y, out, n); "
                                      "executable 'main_dispatch_0' passes 5"),
    (("x", "y", "out", "a", "b", "c", "BLOCK"), "takes 6 parameters"),
])
def test_a_wrong_parameter_count_is_refused(names, expected):
    with pytest.raises(TritonError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        tk.signature(params(*names), SPEC)


@pytest.mark.parametrize("annotation, expected", [("i64", "a 64-bit scalar (i64)"),
                                                  ("fp32", "a float scalar (fp32)"),
                                                  ("*fp32", "is a pointer")])
def test_a_64_bit_float_or_pointer_scalar_is_refused(annotation, expected):
    with pytest.raises(TritonError, match=re.escape(expected)):
        tk.signature(params("x", "y", "out", "n", "alpha", "BLOCK",
                            annotations={"alpha": annotation}), SPEC)


def test_a_scalar_where_a_binding_goes_is_refused():
    with pytest.raises(TritonError, match="binding 1 is passed there"):
        tk.signature(params("x", "y", "out", "n", "m", "BLOCK", annotations={"y": "i32"}), SPEC)


def test_constexprs_must_match_the_functions():
    with pytest.raises(TritonError, match="needs a value for its tl.constexpr parameter 'BLOCK'"):
        tk.signature(params("x", "y", "out", "n", "m", "BLOCK"), {**SPEC, "constexprs": {}})
    with pytest.raises(TritonError, match="sets WARPS, which 'saxpy' has no tl.constexpr"):
        tk.signature(params("x", "y", "out", "n", "m", "BLOCK"),
                     {**SPEC, "constexprs": {"BLOCK": 1, "WARPS": 2}})
    with pytest.raises(TritonError, match="sets 'n', but 'saxpy' takes it at run time"):
        tk.signature(params("x", "y", "out", "n", "m", "BLOCK"),
                     {**SPEC, "constexprs": {"BLOCK": 1, "n": 2}})
    sig, constexprs = tk.signature(params("x", "y", "out", "n", "m", "BLOCK", defaults=("BLOCK",)),
                                   {**SPEC, "constexprs": {}})
    assert constexprs == {} and sig["BLOCK"] == "constexpr"


@pytest.mark.parametrize("metadata, expected", [
    ({"global_scratch_size": 128}, "needs 128 bytes of global scratch memory"),
    ({"profile_scratch_size": 8}, "profile scratch"),
    ({"num_ctas": 2}, "num_ctas=2"),
    ({"launch_pdl": True}, "launch_pdl"),
])
def test_what_iree_cannot_launch_is_refused(metadata, expected):
    with pytest.raises(TritonError, match=expected):
        tk.check_metadata({"global_scratch_size": 0, "profile_scratch_size": 0, "num_ctas": 1,
                           **metadata}, SPEC)


def test_launch_shape_from_metadata():
    assert tk.launch({"num_warps": 4, "warp_size": 32, "shared": 4096}) == \
        {"workgroup_size": [128, 1, 1], "workgroup_local_memory": 4096}
    assert tk.launch({"num_warps": 8, "warp_size": 64, "shared": 0})["workgroup_size"] == [512, 1, 1]


LLIR = """; ModuleID = 'LLVMDialectModule'
define amdgpu_kernel void @saxpy(ptr addrspace(1) inreg nofree readonly captures(none) %0, i32 inreg %1, ptr addrspace(1) inreg nofree readnone captures(none) %2, ptr addrspace(1) inreg readnone %3) local_unnamed_addr #0 !dbg !4 {
  %5 = tail call i32 @llvm.amdgcn.workitem.id.x(), !dbg !12
  %6 = icmp slt i32 %5, %1
  br i1 %6, label %7, label %8

7:                                                ; preds = %4
  store i32 %5, ptr addrspace(1) %0, align 4
  br label %8

8:                                                ; preds = %4, %7
  ret void
}

declare i32 @llvm.amdgcn.workitem.id.x()
"""


def test_the_scratch_parameters_are_removed_and_values_renumbered():
    text = tk.strip_scratch(LLIR, "main_dispatch_0_elementwise_4_f32")
    assert "define amdgpu_kernel void @main_dispatch_0_elementwise_4_f32(ptr addrspace(1) inreg " \
           "nofree readonly captures(none) %0, i32 inreg %1) local_unnamed_addr" in text
    assert "%3 = tail call i32 @llvm.amdgcn.workitem.id.x()" in text
    assert "br i1 %4, label %5, label %6" in text
    assert "\n5:" in text and "\n6:" in text and "preds = %2, %5" in text
    assert "@saxpy" not in text


def test_a_kernel_reading_a_scratch_pointer_is_refused():
    with pytest.raises(TritonError, match="reads Triton's scratch pointer"):
        tk.strip_scratch(LLIR.replace("store i32 %5, ptr addrspace(1) %0",
                                      "store i32 %5, ptr addrspace(1) %2"), "k")


def test_gpu_targets():
    assert tk.gpu_target("sm_80") == ("cuda", 80, 32)
    assert tk.gpu_target("sm_90a") == ("cuda", 90, 32)
    assert tk.gpu_target("gfx942") == ("hip", "gfx942", 64)
    assert tk.gpu_target("gfx1100") == ("hip", "gfx1100", 32)
    with pytest.raises(TritonError):
        tk.gpu_target("vulkan")


def test_interface_types_the_bindings_and_names_the_entry():
    layout = Layout((Binding(0, "storage_buffer", True), Binding(1, "storage_buffer", False)), 2)
    executable = Executable("main$async_dispatch_0", "cuda", "cuda-nvptx-fb",
                            (Export("main$async_dispatch_0_x", 0, layout, None),),
                            subspans=(Subspan(0, 0, "readonly", "f16", (4,)),
                                      Subspan(1, 0, "writeonly", "f32", (4,))))
    sub = Substitution("m", "cuda", "main$async_dispatch_0", "kernels/k.py", "wrapped",
                       Origin("kernels/k.toml", 3, "[[substitutions]] #1"), function="k",
                       kind_fields={"constexprs": {"BLOCK": 64}, "num_warps": 8,
                                    "num_stages": 0, "arch": ""})
    found = tk.interface(sub, executable)
    assert found["bindings"] == ["fp16", "fp32"] and found["constants"] == 2
    assert found["entry"] == "main_async_dispatch_0_x"
    assert found["manifest"] == "kernels/k.toml:3: [[substitutions]] #1"
    assert found["constexprs"] == {"BLOCK": 64} and found["num_warps"] == 8





def test_pointers_are_declared_16_byte_aligned_and_scalars_are_not():
    found = params("x", "y", "out", "n_lo", "n_hi", "BLOCK")
    sig, _ = tk.signature(found, SPEC)
    assert tk.pointer_alignment(found, sig) == {(0,): [["tt.divisibility", 16]],
                                                (1,): [["tt.divisibility", 16]],
                                                (2,): [["tt.divisibility", 16]]}


def _kernel(x, y,
            n, BLOCK):            # a stand-in for a @triton.jit function: its file and lines
    pass


def test_a_kernels_error_names_the_line_of_its_parameter_or_of_its_def():
    import inspect
    from types import SimpleNamespace
    lines, first = inspect.getsourcelines(_kernel)
    fn = SimpleNamespace(fn=_kernel, def_file_line_number=first, src="".join(lines))
    here = os.path.relpath(__file__)
    assert tk.kernel_line(fn) == f" (at {here}:{first})"
    assert tk.kernel_line(fn, "y") == f" (at {here}:{first})"
    assert tk.kernel_line(fn, "n") == f" (at {here}:{first + 1})"
    assert tk.kernel_line(fn, "absent") == f" (at {here}:{first})"
    assert tk.kernel_line(SimpleNamespace()) == ""


def test_an_abi_error_says_which_parameter_it_is_about():
    with pytest.raises(TritonError) as raised:
        tk.signature(params("x", "y", "out", "n", "alpha", "BLOCK",
                            annotations={"alpha": "fp32"}), SPEC)
    assert raised.value.parameter == "alpha"
    with pytest.raises(TritonError) as raised:
        tk.signature(params("x", "y", "out", "n", "BLOCK"), SPEC)
    assert raised.value.parameter == ""                    # a count: the def's line


DEMO = Path(__file__).parents[2] / "kernels/triton/attention_scores.py"
needs_triton = pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="no triton")
# The demo's interpreted run: one head of q @ k^T / sqrt(128) at 256 x 256, placed in
# its bindings at the byte offsets of the transformer's dispatch.
INTERPRETED = '''
import sys
import numpy as np, torch
sys.path.insert(0, sys.argv[1])
import attention_scores
rng = np.random.default_rng(0)
q, kt = rng.uniform(-1, 1, (256, 128)).astype("f4"), rng.uniform(-1, 1, (128, 256)).astype("f4")
qk = np.zeros((163840 + q.nbytes) // 4, "f4")            # k^T at byte 32768, then q
qk[163840 // 4:], qk[32768 // 4:163840 // 4] = q.ravel(), kt.ravel()
out = torch.full(((1024 + 256 * 256 * 4) // 4,), -1.0)
attention_scores.scores[(4, 1)](torch.from_numpy(qk), out, HEADS=1, M=256, N=256, K=128,
    Q_AT=163840, KT_AT=32768, OUT_AT=1024, SCALE=11.3137083, BLOCK_M=128, BLOCK_N=128,
    BLOCK_K=64, GROUP_M=8)
got = out.numpy()
assert (got[:256] == -1).all(), "wrote before OUT_AT"
want = (q.astype("f8") @ kt.astype("f8")) / 11.3137083
print(float(np.abs(got[256:].reshape(256, 256) - want).max()))
'''


@needs_triton
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="no torch")
def test_the_demo_kernel_computes_the_attention_scores_in_triton_s_interpreter():
    result = subprocess.run([sys.executable, "-c", INTERPRETED, str(DEMO.parent)],
                            capture_output=True, text=True, timeout=300,
                            env={**os.environ, "TRITON_INTERPRET": "1"})
    assert result.returncode == 0, result.stderr
    assert float(result.stdout) < 1e-5


@needs_triton
def test_the_demo_kernel_compiles_to_wgmma_for_hopper(tmp_path):
    spec = {"manifest": "demo", "kernel": str(DEMO), "function": "scores",
            "executable": "main$async_dispatch_8",
            "entry": "main_async_dispatch_8_batch_matmul_4x2048x2048x128_f32",
            "bindings": ["fp32", "fp32"], "constants": 0, "num_warps": 8, "num_stages": 2,
            "constexprs": {"HEADS": 4, "M": 2048, "N": 2048, "K": 128, "Q_AT": 8388608,
                           "KT_AT": 4194304, "OUT_AT": 12582912, "SCALE": 11.3137083,
                           "BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64, "GROUP_M": 8}}
    (tmp_path / "interface.json").write_text(json.dumps(spec))
    result = subprocess.run([sys.executable, tk.__file__, str(DEMO), "--arch=sm_90a",
                             f"--interface={tmp_path / 'interface.json'}",
                             f"--metadata={tmp_path / 'k.json'}", "-o", str(tmp_path / "k.ptx")],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ptx = (tmp_path / "k.ptx").read_text()
    assert "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32" in ptx
    assert "cp.async.cg.shared.global" in ptx             # 16-byte loads: the pointers' alignment
    metadata = json.loads((tmp_path / "k.json").read_text())
    assert metadata["workgroup_size"] == [256, 1, 1]
    assert metadata["workgroup_local_memory"] == 131072   # 2 stages of 128x64 and 64x128 f32
