"""Triton kernels (.py): compiled ahead of time for cuda and hip, checked, linked by a wrapper.

Compile only (no GPU here): the module builds with the Triton kernel in it, the PTX
has the export's name and IREE's parameters, the wrapper launches it with Triton's
workgroup size; each bad kernel stops the build with one line naming the manifest
entry. tests/gpu/test_triton_on_gpu.py runs the module.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import re

import pytest

from conftest import REPO
from iree_kernels.core import toolchains

pytestmark = pytest.mark.skipif(importlib.util.find_spec("triton") is None,
                                reason="no triton (./setup.sh installs it)")
needs_ptxas = pytest.mark.skipif(toolchains.ptxas() is None, reason="no ptxas")

SAXPY = (REPO / "kernels/triton/saxpy.py").read_text()
EXPORT = "main_dispatch_0_elementwise_D_f32"


def manifest(target="cuda", file="kernels/saxpy.py", extra="") -> str:
    return f"""
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["{target}"]

[[substitutions]]
model = "saxpy"
target = "{target}"
executable = "main_dispatch_0"
file = "{file}"
constexprs = {{ BLOCK = 1024 }}
workgroup_count = ["ceildiv(w0, 1024)"]
{extra}
"""


@pytest.fixture
def saxpy(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.write("kernels/saxpy.py", SAXPY)
    return project


@needs_ptxas
def test_a_triton_kernel_builds_into_a_cuda_module(saxpy):
    saxpy.write("kernels/demo.toml", manifest(extra="num_warps = 8"))
    build = saxpy.scons("IREE_TARGETS=cuda")
    assert build.ran("TRITON") == ["build/cuda/saxpy/main_dispatch_0.ptx"]
    ptx = saxpy.read("build/cuda/saxpy/main_dispatch_0.ptx")
    assert re.search(r"^\.version 9\.0$", ptx, re.M) and re.search(r"^\.target sm_80$", ptx, re.M)
    entry = re.search(rf"\.entry {EXPORT}\(([^)]*)\)", ptx)
    assert entry, ptx[:2000]
    types = re.findall(r"\.param \.(u64|u32)", entry.group(1))
    assert types == ["u64"] * 3 + ["u32"] * 4             # the scratch pointers are gone
    assert ".reqntid 256" in ptx
    wrapper = saxpy.read("build/cuda/saxpy/main_dispatch_0.wrapper.mlir")
    assert "<workgroup_size = [256 : index, 1 : index, 1 : index]>" in wrapper
    assert (saxpy.root / "build/cuda/saxpy.vmfb").is_file()
    record = json.loads(saxpy.read("build/cuda/saxpy/substitutions.json"))
    assert record["substitutions"][0]["file"] == "kernels/saxpy.py"
    # Up to date: nothing runs again; an edit to a module it imports recompiles it.
    assert saxpy.scons("IREE_TARGETS=cuda").ran("TRITON") == []
    saxpy.write("kernels/scale.py", "SCALE = 2.0\n")
    saxpy.write("kernels/saxpy.py", SAXPY.replace("import triton\n", "import triton\nimport scale\n"))
    assert saxpy.scons("IREE_TARGETS=cuda").ran("TRITON") == ["build/cuda/saxpy/main_dispatch_0.ptx"]
    saxpy.write("kernels/scale.py", "SCALE = 3.0\n")
    assert saxpy.scons("IREE_TARGETS=cuda").ran("TRITON") == ["build/cuda/saxpy/main_dispatch_0.ptx"]
    # A helper that is no regular file is one line: SCons hashing it blocked or never ended.
    (saxpy.root / "kernels/scale.py").unlink()
    (saxpy.root / "kernels/scale.py").symlink_to("/dev/zero")
    refused = saxpy.scons("IREE_TARGETS=cuda", expect_ok=False)
    assert "kernels/scale.py: a module kernels/saxpy.py imports is a character device, not a " \
        "regular file\n" in refused.output and refused.returncode == 2


def test_a_triton_kernel_builds_into_a_hip_module(saxpy):
    saxpy.write("kernels/demo.toml", manifest("hip"))
    build = saxpy.scons("IREE_TARGETS=hip")
    assert build.ran("TRITON") == ["build/hip/saxpy/main_dispatch_0.hsaco"]
    code = (saxpy.root / "build/hip/saxpy/main_dispatch_0.hsaco").read_bytes()
    assert code[:4] == b"\x7fELF" and EXPORT.encode() in code
    assert b".kernarg_segment_size\x28" in code            # 3 pointers + 4 words: 40 bytes
    wrapper = saxpy.read("build/hip/saxpy/main_dispatch_0.wrapper.mlir")
    assert "<workgroup_size = [256 : index, 1 : index, 1 : index]>" in wrapper   # 4 x 64
    assert (saxpy.root / "build/hip/saxpy.vmfb").is_file()
    # Triton's version keys the kernel's compile, so the release's lock names it.
    saxpy.scons("IREE_TARGETS=hip", "release")
    module, = json.loads(saxpy.read("build/release/iree-kernels-release.lock.json"))["modules"]
    assert module["tools"]["triton"] == f"triton {importlib.metadata.version('triton')}"
    assert sorted(module["tools"]) == ["iree-compile", "triton"]


@needs_ptxas
def test_arch_compiles_for_hopper_and_ptxas_checks_it_there(saxpy):
    saxpy.write("kernels/demo.toml", manifest(extra='arch = "sm_90a"'))
    saxpy.scons("IREE_TARGETS=cuda")
    ptx = saxpy.read("build/cuda/saxpy/main_dispatch_0.ptx")
    assert re.search(r"^\.target sm_90a$", ptx, re.M)


SCRATCH = '''import triton
import triton.language as tl


@triton.jit
def saxpy(x, y, out, n_lo, n_hi, out_n_lo, out_n_hi, BLOCK: tl.constexpr):
    d = tl.make_tensor_descriptor(x, shape=[n_lo], strides=[1], block_shape=[BLOCK])
    tl.store(out + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK), d.load([tl.program_id(0) * BLOCK]))
'''
BAD = [
    ("count", SAXPY.replace("out_n_lo, out_n_hi, BLOCK", "BLOCK"), "",
     "'saxpy' takes 5 parameters that are not tl.constexpr (x, y, out, n_lo, n_hi); executable "
     "'main_dispatch_0' passes 7"),
    ("float", SAXPY.replace("out_n_hi, BLOCK", "out_n_hi: tl.float32, BLOCK"), "",
     "'saxpy' parameter 'out_n_hi' is a float scalar (fp32)"),
    ("64-bit", SAXPY.replace("n_hi, out_n_lo", "n_hi: tl.int64, out_n_lo"), "",
     "'saxpy' parameter 'n_hi' is a 64-bit scalar (i64)"),
    ("scratch", SCRATCH, 'arch = "sm_90a"', "'saxpy' needs 128 bytes of global scratch memory"),
    ("function", SAXPY, 'function = "saxpy2"',
     "no @triton.jit function named 'saxpy2'; its @triton.jit functions: saxpy"),
    ("compile", SAXPY.replace("tl.arange(0, BLOCK)", "tl.arange(0, 1000)"), "",
     "Triton cannot compile 'saxpy': "),
]


@needs_ptxas
@pytest.mark.parametrize("case, kernel, extra, expected", BAD, ids=[b[0] for b in BAD])
def test_a_bad_triton_kernel_is_one_line_naming_the_entry(saxpy, case, kernel, extra, expected):
    saxpy.write("kernels/saxpy.py", kernel)
    saxpy.write("kernels/demo.toml", manifest(extra=extra))
    build = saxpy.scons("IREE_TARGETS=cuda", expect_ok=False)
    assert build.returncode != 0
    errors = [line for line in build.output.splitlines() if line.startswith("scons: ***")]
    assert len(errors) == 1, build.output
    assert "kernels/demo.toml:6: [[substitutions]] #1 (executable 'main_dispatch_0' of " \
           "saxpy/cuda): kernel kernels/saxpy.py: " in errors[0], build.output
    assert expected in errors[0], build.output
    assert "Traceback" not in build.output
    # The kernel's source line: the failing statement's, else the def's (the parameters');
    # a function that is not there has none (the line lists those there are).
    if case != "function":
        at = "1000" if case == "compile" else "def saxpy("
        line = next(n for n, text in enumerate(kernel.splitlines(), 1) if at in text)
        assert errors[0].endswith(f"(at kernels/saxpy.py:{line})"), errors[0]
    assert saxpy.scons("--question", "IREE_TARGETS=cuda", expect_ok=False).returncode != 0


def test_manifest_fields_of_a_triton_kernel_are_checked(saxpy):
    saxpy.write("kernels/demo.toml", manifest(extra="workgroup_size = [128]"))
    build = saxpy.scons("IREE_TARGETS=cuda", expect_ok=False)
    assert "field 'workgroup_size': a Triton kernel's workgroup size is num_warps" in build.output
    saxpy.write("kernels/demo.toml", manifest(extra="num_warps = 3"))
    build = saxpy.scons("IREE_TARGETS=cuda", expect_ok=False)
    assert "field 'num_warps': must be a power of two from 1 to 32, not 3" in build.output
