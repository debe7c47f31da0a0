"""The catalogue of bad inputs: each gets one clear error, a non-zero exit and no traceback.

Each ``Case`` is a small repo (a manifest, files, command-line variables) and
the first error line its build must print. ``run_bad_input`` runs one with
scons (tests/e2e/test_bad_inputs.py, test_hostile_inputs.py): it checks that
the first error line names the file (and line, where there is one) and says
what is wrong, the exit status, that no Python traceback is printed, that
nothing the failed build left is taken as up to date by ``scons --question``
(asked wherever the build made anything), and that nothing changed outside the
repo. The cases refused while the manifests are read (``REFUSED_BY_THE_LOADER``)
are checked on the loader itself (tests/unit/test_manifest_catalogue.py); a few
of them (``PLUMBING``) still run scons, for what only a scons run shows: one
line, exit 2, no traceback, nothing written.
"""
from __future__ import annotations

import json
import os
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness import REPO
from iree_kernels.core import toolchains

from iree_kernels.core import toolchains

MLP_CASE_INPUTS = tomllib.loads((REPO / "models/mlp.expected.toml").read_text())["case"][0]["inputs"]
BASE = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan", "cuda"]

[models.ew]
source = "models/ew.mlir"
targets = ["llvm-cpu", "vulkan", "cuda"]
"""
GLSL = (REPO / "kernels/vulkan/elementwise.glsl").read_text()
CUDA = (REPO / "kernels/cuda/elementwise.cu").read_text()
C = (REPO / "kernels/cpu/saxpy.c").read_text()


def sub(model="mlp", target="llvm-cpu", executable="main_dispatch_1",
        file="kernels/k.mlir", **more) -> str:
    fields = dict(model=model, target=target, executable=executable, file=file, **more)
    lines = [f"{k} = {json.dumps(v)}" if isinstance(v, list) else
             f"{k} = {v}" if k == "raw" else f'{k} = "{v}"' for k, v in fields.items()]
    return "\n[[substitutions]]\n" + "\n".join(lines).replace("raw = ", "") + "\n"


@dataclass
class Case:
    id: str
    manifest: str
    expect: str
    files: dict = field(default_factory=dict)
    args: tuple = ()
    needs: str = ""
    absent: str = ""          # a file the failed build must not leave behind
    env: dict = field(default_factory=dict)
    code: int = 2             # scons's exit status
    tools: dict = field(default_factory=dict)   # {ENV_VAR: python body}: a fake program
    present: str = ""         # a file the build must still have made (what did not need the failure)
    shows: str = ""           # a line the output must hold


FIFO, FOLDER = object(), object()      # special files a case may ask for


@dataclass(frozen=True)
class Link:
    """A symbolic link to ``to`` (absolute, or relative to the link)."""
    to: str


SQUARE = (REPO / "kernels/llvm-cpu/mlp_square_relu.mlir").read_text()


def line_of(text: str, snippet: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if snippet in line)


EW = dict(model="ew", executable="main_dispatch_0")
ONNX_NET = '\n[models.net]\nsource = "models/net.onnx"\ntargets = ["llvm-cpu"]\n'
CASES = [
    # The manifest itself: refused before anything is built (exit 2).
    Case("malformed-toml", BASE + "[[substitutions]\n", "kernels/demo.toml:9: not valid TOML"),
    Case("unknown-top-level-key", "name = 1\n" + BASE, "kernels/demo.toml:1: unknown top-level key 'name'"),
    Case("unknown-field", BASE + sub(fiel="x"), "kernels/demo.toml:15: [[substitutions]] #1: "
         "unknown field 'fiel' (did you mean 'file'?)"),
    Case("unknown-model-field", BASE.replace('source = "models/mlp.mlir"', 'sources = "x"'),
         "kernels/demo.toml:3: models.mlp: unknown field 'sources' (did you mean 'source'?)"),
    Case("missing-model", BASE + sub().replace('model = "mlp"\n', ""),
         "[[substitutions]] #1: field 'model': missing required field"),
    Case("missing-file", BASE + sub().replace('file = "kernels/k.mlir"\n', ""),
         "field 'file': missing required field"),
    Case("targets-not-a-list", BASE.replace('targets = ["llvm-cpu", "vulkan", "cuda"]\n\n[models.ew]',
                                            'targets = "cuda"\n\n[models.ew]'),
         "kernels/demo.toml:4: models.mlp: field 'targets': must be a list of target names"),
    Case("targets-empty", BASE.replace('targets = ["llvm-cpu", "vulkan", "cuda"]\n\n[models.ew]',
                                       'targets = []\n\n[models.ew]'),
         "kernels/demo.toml:4: models.mlp: field 'targets': is empty: the model would be built "
         "for no target"),
    Case("executable-not-a-string", BASE + sub(raw="executable = 7\n").replace(
        'executable = "main_dispatch_1"\n', ""), "field 'executable': must be a non-empty string"),
    Case("duplicate", BASE + sub() + sub(), "[[substitutions]] #2 (executable 'main_dispatch_1' of "
         "mlp/llvm-cpu): field 'executable': executable 'main_dispatch_1' of mlp/llvm-cpu is "
         "already substituted at kernels/demo.toml:10 ([[substitutions]] #1"),
    Case("no-selector", BASE + sub().replace('executable = "main_dispatch_1"\n', ""),
         "kernels/demo.toml:10: [[substitutions]] #1: field 'executable': missing the executable "
         "to replace: give executable = \"NAME\", export = \"PATTERN\""),
    Case("executable-and-export", BASE + sub(export="*_reduction_*"),
         "kernels/demo.toml:15: [[substitutions]] #1: field 'export': give executable or export, "
         "not both"),
    Case("fingerprint-malformed", BASE + sub(fingerprint="sha256:abc"),
         "kernels/demo.toml:15: [[substitutions]] #1: "
         "field 'fingerprint': 'sha256:abc' is not a fingerprint: expected 'sha256:' and 12 to 64 "
         "hex digits"),
    Case("unknown-model", BASE + sub(model="mpl"), "field 'model': unknown model 'mpl' (did you "
         "mean 'mlp'?); declared models: ew, mlp"),
    Case("unknown-target", BASE.replace('"vulkan", "cuda"]\n\n[models.ew]', '"vulkn"]\n\n[models.ew]'),
         "models.mlp: field 'targets': unknown target 'vulkn' (did you mean 'vulkan'?); known "
         "targets: llvm-cpu, vulkan, cuda, hip"),
    Case("target-not-built", BASE.replace('"vulkan", "cuda"]\n\n[models.ew]', '"vulkan"]\n\n[models.ew]')
         + sub(target="cuda", file="kernels/k.cu"), "field 'target': model 'mlp' is not built for "
         "target 'cuda'; its targets: llvm-cpu, vulkan", files={"kernels/k.cu": CUDA}),
    Case("kernel-missing", BASE + sub(file="kernels/nope.mlir"),
         "kernels/demo.toml:14: [[substitutions]] #1 (executable 'main_dispatch_1' of mlp/llvm-cpu): "
         "field 'file': file not found: kernels/nope.mlir"),
    Case("outside-repo", BASE + sub(file="../k.mlir"), "field 'file': '../k.mlir' is outside the repository"),
    Case("absolute-path", BASE + sub(file="/tmp/k.mlir"), "field 'file': '/tmp/k.mlir' is absolute"),
    Case("shell-in-path", BASE + sub(file="kernels/$(touch pwned).mlir"),
         "field 'file': path 'kernels/$(touch pwned).mlir' contains '$'"),
    Case("shell-in-model-name", BASE.replace("[models.ew]", '[models."ew;rm -rf x"]'),
         "models.ew;rm -rf x: model names may use letters, digits"),
    Case("unknown-file-type", BASE + sub(file="kernels/k.txt"), "field 'file': 'kernels/k.txt' is "
         "not a kernel file this tool knows"),
    Case("ptx-as-source", BASE + sub(target="cuda", file="kernels/k.ptx", mode="source"),
         "field 'mode': a PTX kernel cannot be substituted in source mode"),
    Case("object-on-cpu", BASE + sub(file="kernels/k.o", mode="object"),
         "field 'mode': a native object cannot be substituted in object mode: a native object can "
         "only be linked by a generated wrapper (wrapped mode); substituted as an object or a "
         "source it crashes iree-compile"),
    Case("spv-for-cpu", BASE + sub(file="kernels/k.spv"), "field 'file': a SPIR-V shader cannot "
         "replace an executable of target 'llvm-cpu'; it fits vulkan"),
    Case("unknown-mode", BASE + sub(mode="objekt"), "field 'mode': unknown mode 'objekt' (did you "
         "mean 'object'?)"),
    Case("wrapped-without-count", BASE + sub(file="kernels/k.c"),
         "field 'workgroup_count': a wrapped substitution needs a workgroup_count"),
    Case("count-syntax", BASE + sub(file="kernels/k.c", workgroup_count=["w0 +"]),
         "field 'workgroup_count': 'w0 +' is not an expression"),
    Case("model-source-missing", BASE.replace("models/ew.mlir", "models/gone.mlir"),
         "kernels/demo.toml:7: models.ew: field 'source': file not found: models/gone.mlir"),
    Case("expected-file-malformed", BASE, "models/mlp.expected.toml:1: not valid TOML",
         files={"models/mlp.expected.toml": "[[case]\n"}, args=("check",)),
    # Found while building: the module is not made (exit non-zero).
    Case("unknown-executable", BASE + sub(executable="main_dispatch_7"),
         "kernels/demo.toml:13: [[substitutions]] #1 (executable 'main_dispatch_7' of mlp/llvm-cpu): "
         "field 'executable': model 'mlp' has no executable 'main_dispatch_7' for target "
         "'llvm-cpu' (did you mean 'main_dispatch_1'?); its executables: main_dispatch_0, "
         "main_dispatch_1", absent="build/llvm-cpu/mlp.vmfb"),
    Case("export-ambiguous", BASE + sub().replace('executable = "main_dispatch_1"', 'export = "*_f32"'),
         "kernels/demo.toml:13: [[substitutions]] #1 (export '*_f32' of mlp/llvm-cpu): field "
         "'export': 2 executables of mlp/llvm-cpu match; add a fingerprint (or a longer one) to "
         "choose one: main_dispatch_0 (main_dispatch_0_matmul_4x16x8_f32, sha256:",
         absent="build/llvm-cpu/mlp.vmfb"),
    Case("export-missing", BASE + sub().replace('executable = "main_dispatch_1"', 'export = "*_conv_*"'),
         "kernels/demo.toml:13: [[substitutions]] #1 (export '*_conv_*' of mlp/llvm-cpu): field "
         "'export': no executable of mlp/llvm-cpu has an export matching '*_conv_*'; its "
         "executables: main_dispatch_0 (main_dispatch_0_matmul_4x16x8_f32), main_dispatch_1 "
         "(main_dispatch_1_reduction_4x16_f32)", absent="build/llvm-cpu/mlp.vmfb"),
    Case("fingerprint-missing", BASE + sub().replace('executable = "main_dispatch_1"',
                                                     'fingerprint = "sha256:000000000000"'),
         "field 'fingerprint': no executable of model 'mlp' on llvm-cpu has fingerprint "
         "sha256:000000000000, nor did one in an earlier build (mistyped? `scons dump` lists "
         "them); the fingerprints of its executables: main_dispatch_0 (",
         absent="build/llvm-cpu/mlp.vmfb"),
    Case("shell-in-executable-name", BASE + sub(executable="$(reboot)`reboot`;reboot"),
         "model 'mlp' has no executable '$(reboot)`reboot`;reboot'"),
    Case("nvcc-error", BASE + sub(target="cuda", file="kernels/k.cu", **EW),
         f'kernels/k.cu({line_of(CUDA, "out[i] = a[i]")}): error: identifier "oops" is undefined',
         needs="nvcc",
         files={"kernels/k.cu": CUDA.replace("out[i] = a[i]", "out[i] = oops[i]")},
         absent="build/kernels/k.ptx"),
    Case("glslang-error", BASE + sub(target="vulkan", file="kernels/k.glsl", **EW),
         f"kernels/k.glsl:{line_of(GLSL, 'pc.values[0]')}: 'oops' : undeclared identifier", needs="glslangValidator",
         files={"kernels/k.glsl": GLSL.replace("pc.values[0]", "oops")}, absent="build/kernels/k.spv"),
    Case("clang-error", BASE + sub(file="kernels/k.c", workgroup_count=[1], **EW),
         f"kernels/k.c:{line_of(C, 'out[i] = 2.0f')}:", needs="clang",
         files={"kernels/k.c": C.replace("out[i] = 2.0f", "out[i] = oops")}, absent="build/kernels/k.o"),
    Case("empty-spv", BASE + sub(target="vulkan", file="kernels/k.spv", **EW),
         "kernels/k.spv: empty file; expected a SPIR-V binary", files={"kernels/k.spv": b""},
         absent="build/vulkan/ew.vmfb"),
    Case("corrupted-spv", BASE + sub(target="vulkan", file="kernels/k.spv", **EW),
         "kernels/k.spv: not a SPIR-V binary", files={"kernels/k.spv": b"GLSL text, not SPIR-V!!"}),
    Case("empty-ptx", BASE + sub(target="cuda", file="kernels/k.ptx", **EW),
         "kernels/k.ptx: the PTX file is empty", files={"kernels/k.ptx": ""}),
    Case("corrupted-ptx", BASE + sub(target="cuda", file="kernels/k.ptx", **EW),
         "kernels/k.ptx: not PTX: no '.version' directive", files={"kernels/k.ptx": "garbage\n"}),
    Case("ptx-entry-mismatch", BASE + sub(target="cuda", file="kernels/k.cu", **EW),
         "kernels/demo.toml:10: [[substitutions]] #1 (executable 'main_dispatch_0' of ew/cuda): "
         "kernel kernels/k.cu (compiled to build/kernels/k.ptx): executable 'main_dispatch_0': "
         "the PTX has no .entry named 'main_dispatch_0_elementwise_D_f32'", needs="nvcc",
         files={"kernels/k.cu": CUDA.replace("elementwise_D_f32", "elementwise")},
         absent="build/cuda/ew.vmfb"),
    Case("ptx-parameter-mismatch", BASE + sub(target="cuda", file="kernels/k.cu", **EW),
         "has 5 parameters, expected 7 (3 bindings + 4 push constants)", needs="nvcc",
         files={"kernels/k.cu": CUDA.replace(", unsigned int out_n_lo, unsigned int out_n_hi", "")}),
    Case("spirv-binding-mismatch", BASE + sub(target="vulkan", file="kernels/k.glsl", **EW),
         "kernels/demo.toml:10: [[substitutions]] #1 (executable 'main_dispatch_0' of ew/vulkan): "
         "kernel kernels/k.glsl (compiled to build/vulkan/ew/main_dispatch_0.spv): SPIR-V does not "
         "fit executable 'main_dispatch_0': expected bindings 0..2, found [0, 1, 3] (at "
         f"kernels/k.glsl:{line_of(GLSL, 'binding = 2)')})", needs="glslangValidator",
         files={"kernels/k.glsl": GLSL.replace("binding = 2)", "binding = 3)")},
         absent="build/vulkan/ew.vmfb"),
    Case("spirv-push-constant-mismatch", BASE + sub(target="vulkan", file="kernels/k.glsl", **EW),
         "expected a push-constant block of at least 4 32-bit words, found 1", needs="glslangValidator",
         files={"kernels/k.glsl": GLSL.replace("uint values[4]", "uint values[1]")}),
    Case("spirv-descriptor-set", BASE + sub(target="vulkan", file="kernels/k.glsl", **EW),
         "binding 0 is in descriptor set 1, expected set 0", needs="glslangValidator",
         files={"kernels/k.glsl": GLSL.replace("set = 0, binding = 0", "set = 1, binding = 0")}),
    Case("workgroup-size-mismatch", BASE + sub(target="vulkan", file="kernels/k.glsl", mode="wrapped",
                                               workgroup_size=[32], workgroup_count=[1], **EW),
         "the shader's local_size is [64, 1, 1], the manifest's workgroup_size is [32, 1, 1]",
         needs="glslangValidator", files={"kernels/k.glsl": GLSL}),
    Case("count-unknown-workload", BASE + sub(file="kernels/k.c", workgroup_count=["w2"], **EW),
         "field 'workgroup_count': unknown name 'w2'; the workload values are w0, w1", needs="clang",
         files={"kernels/k.c": C}),
    Case("model-does-not-parse", BASE, "models/ew.mlir:", files={"models/ew.mlir": "func.func @main(\n"},
         args=("IREE_TARGETS=llvm-cpu",), absent="build/llvm-cpu/ew.vmfb"),
    Case("iree-compile-fails", BASE + sub(), f"kernels/k.mlir:{line_of(SQUARE, 'maximumf')}:", files={
        "kernels/k.mlir": SQUARE.replace("arith.maximumf", "arith.maximumz")},
        args=("IREE_TARGETS=llvm-cpu",), absent="build/llvm-cpu/mlp.vmfb"),
    Case("tool-missing", BASE + sub(target="cuda", file="kernels/k.cu", **EW),
         "nvcc is not installed: ./setup.sh installs the nvidia-cuda-nvcc wheel where no nvcc is on "
         "PATH; or set NVCC=/path/to/nvcc; not built: build/cuda/ew.vmfb",
         files={"kernels/k.cu": CUDA}, env={"NVCC": "/nonexistent/nvcc"}, absent="build/cuda/ew.vmfb"),
    Case("ptx-isa-version-malformed", BASE, "PTX_ISA_VERSION=9: expected MAJOR.MINOR, e.g. 9.0",
         args=("PTX_ISA_VERSION=9",)),
    Case("two-kernels-one-output", BASE + sub(target="vulkan", file="kernels/k.glsl", **EW)
         + sub(target="vulkan", file="kernels/k.comp", executable="main_dispatch_1"),
         "kernels/k.glsl and kernels/k.comp would both compile to build/kernels/k.spv; rename one",
         files={"kernels/k.glsl": GLSL, "kernels/k.comp": GLSL}),
    Case("scaffold-into-an-unread-manifest", BASE, "SCAFFOLD_MANIFEST=other/x.toml is not one of "
         "the manifests the build reads", args=("scaffold", "SCAFFOLD=mlp/cuda/main_dispatch_0",
                                                "SCAFFOLD_MANIFEST=other/x.toml")),
    Case("opset-on-an-mlir-source", BASE.replace('source = "models/ew.mlir"\n',
                                                  'source = "models/ew.mlir"\nopset = 17\n'),
         "kernels/demo.toml:8: models.ew: field 'opset': only an .onnx source takes 'opset'"),
    Case("onnx-does-not-parse", BASE + ONNX_NET, "[build/models/net.mlir] kernels/demo.toml:10: "
         "models.net: cannot import models/net.onnx: DecodeError: Error parsing message",
         files={"models/net.onnx": b"\x08\x07garbage"}, args=("build/llvm-cpu/net.vmfb",),
         absent="build/models/net.mlir"),
    Case("wrong-expected-output", BASE, "models/mlp.expected.toml: [[case]] #1: build/llvm-cpu/mlp.vmfb "
         "on device 'local-sync' does not produce the expected outputs of @main",
         files={"models/mlp.expected.toml": '[[case]]\nfunction = "main"\ninputs = ["4x8xf32=1", '
                '"8x16xf32=1", "16xf32=0"]\noutputs = ["4xf32=1"]\n'},
         args=("check", "IREE_TARGETS=llvm-cpu"), absent="build/llvm-cpu/mlp.check"),
    # mlp computes 23 27 26.5 21; 23.000001907348633 is the next float32 after 23.
    Case("one-ulp-off-with-exact-comparison", BASE, "build/llvm-cpu/mlp.vmfb on device "
         "'local-sync' does not produce the expected outputs of @main: result 0: element [0] is "
         "23.0, expected 23.000001907348633 (difference -1.9073486328125e-06, 1 ulp); 1 of 4 "
         "elements differ (exact)",
         files={"models/mlp.expected.toml": '[[case]]\nfunction = "main"\ninputs = ['
                + ", ".join(f'"{v}"' for v in MLP_CASE_INPUTS)
                + ']\noutputs = ["4xf32=23.000001907348633 27 26.5 21"]\n'
                'targets = ["llvm-cpu"]\natol = 0\nrtol = 0\n'},
         args=("check", "IREE_TARGETS=llvm-cpu"), absent="build/llvm-cpu/mlp.check"),
    Case("manifests-outside", BASE, "MANIFESTS=/tmp/*.toml: a glob of files inside the "
         "repository, relative to its root", args=("MANIFESTS=/tmp/*.toml",)),
    Case("folder-where-a-file-goes", BASE, "compile_commands.json is a folder, where the build "
         "writes a file; move it away", files={"compile_commands.json": FOLDER},
         args=("compile_commands.json",)),
    Case("file-where-a-folder-goes", BASE, "/etc/hostname is a file, where the build writes a "
         "folder; move it away", args=("CODEGEN_CACHE_DIR=/etc/hostname",
                                       "EXECUTABLE_CACHE=llvm-cpu", "IREE_TARGETS=llvm-cpu")),
    Case("tolerance-negative", BASE, "field 'ulp': must be a non-negative integer (0: exact)",
         files={"models/mlp.expected.toml": '[[case]]\nfunction = "main"\noutputs = ["4xf32=1"]\n'
                'ulp = -1\n'}, args=("check", "IREE_TARGETS=llvm-cpu")),
]



PWNED = "pwned"     # what code smuggled into a string would create (see test_hostile_inputs)


FAKES = {"IREE_COMPILE": ("iree-compile", toolchains.iree_compile),
         "CLANG": ("clang", lambda: toolchains.on_path("clang")),
         "NVCC": ("nvcc", toolchains.nvcc)}


def fake_tool(folder: Path, variable: str, body: str) -> Path:
    """The program $variable names, replaced by ``body`` (Python; ``REAL``: the real program)."""
    name, real = FAKES[variable]
    folder.mkdir(parents=True, exist_ok=True)
    tool = folder / name
    tool.write_text(f"#!{sys.executable}\nimport os, sys, time\nREAL = {real()!r}\n{body}\n")
    tool.chmod(0o755)
    return tool


def write_files(root: Path, files: dict) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if content is FIFO:
            os.mkfifo(path)
        elif content is FOLDER:
            path.mkdir()
        elif isinstance(content, Link):
            path.symlink_to(content.to)
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def snapshot(folder: Path, skip: Path) -> dict:
    """Every path under ``folder`` but ``skip``, with its size and time: to see that nothing changed."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        if Path(dirpath) == skip.parent:
            dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            stat = os.lstat(os.path.join(dirpath, name))
            found[os.path.join(dirpath, name)] = (stat.st_size, stat.st_mtime_ns)
    return found


def run_bad_input(project, case, monkeypatch, tmp_path) -> None:
    if case.needs == "nvcc" and toolchains.nvcc() is None or \
            case.needs not in ("", "nvcc") and toolchains.on_path(case.needs) is None:
        pytest.skip(f"no {case.needs}")
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    for variable, body in case.tools.items():
        monkeypatch.setenv(variable, str(fake_tool(tmp_path / "tools", variable, body)))
    write_repo(project.root, case)
    outside = snapshot(tmp_path, project.root)
    inside = snapshot(project.root, project.root / "build")
    build = project.scons(*case.args, expect_ok=False)
    assert build.returncode == case.code, build.output
    first_error = next((line for line in build.output.splitlines()
                        if line.startswith("scons: ***")), None)
    assert first_error is not None, build.output
    for expected in case.expect if isinstance(case.expect, tuple) else (case.expect,):
        assert expected in first_error, build.output
    if case.shows:
        assert case.shows in build.output.splitlines(), build.output
    if case.present:
        assert (project.root / case.present).is_file(), build.output
    assert "Traceback" not in build.output
    if case.absent:
        assert not (project.root / case.absent).exists()
    made = [p for p in (project.root / "build").rglob("*") if p.name != ".scons-lock"] \
        if (project.root / "build").is_dir() else []
    if made:    # it went far enough to make something: what it was making is not taken as done
        question = project.scons("--question", *case.args, expect_ok=False)
        assert question.returncode != 0, question.output
        assert "Traceback" not in question.output
    assert snapshot(tmp_path, project.root) == outside
    assert not (project.root / PWNED).exists(), "a string was run as code"
    if case.id in REFUSED_BY_THE_LOADER:    # refused before anything is declared: nothing written
        assert not (project.root / "build").exists(), build.output
        assert snapshot(project.root, project.root / "build") == inside, build.output


def write_repo(root: Path, case: Case) -> None:
    """The repo of ``case`` in ``root`` (beside a SConstruct, where a Project wrote one): the two
    models, a kernel of each kind, the case's files and its manifest."""
    write_files(root, {
        "models/mlp.mlir": (REPO / "models/mlp.mlir").read_text(),
        "models/ew.mlir": (REPO / "models/elementwise.mlir").read_text(),
        "kernels/k.mlir": SQUARE, "kernels/k.txt": "", "kernels/k.ptx": ".version 9.0\n",
        "kernels/k.o": b"\x7fELF", "kernels/k.spv": b"\x03\x02\x23\x07", "kernels/k.c": C,
        **case.files})
    if case.manifest is not None:
        write_files(root, {"kernels/demo.toml": case.manifest})


# The cases the manifest loader (iree_kernels.project.manifest.load_project) refuses, with the
# message the build prints: checked on the loader (tests/unit/test_manifest_catalogue.py), in
# a few milliseconds each, instead of a scons run each.
REFUSED_BY_THE_LOADER = frozenset({
    # bad_inputs.CASES
    "malformed-toml", "unknown-top-level-key", "unknown-field", "unknown-model-field",
    "missing-model", "missing-file", "targets-not-a-list", "targets-empty",
    "executable-not-a-string", "duplicate",
    "no-selector", "executable-and-export", "fingerprint-malformed", "unknown-model",
    "unknown-target", "target-not-built", "kernel-missing", "outside-repo", "absolute-path",
    "shell-in-path", "shell-in-model-name", "unknown-file-type", "ptx-as-source",
    "object-on-cpu", "spv-for-cpu", "unknown-mode", "wrapped-without-count", "count-syntax",
    "model-source-missing", "opset-on-an-mlir-source",
    # hostile_inputs.CASES
    "inject-folder-file", "inject-model-name", "inject-source", "inject-expected-path",
    "inject-model-target", "inject-substitution-model", "inject-substitution-target",
    "inject-kernel-path", "inject-mode", "inject-function", "inject-workgroup-count",
    "inject-workgroup-count-call", "inject-workgroup-size", "manifest-fifo", "manifest-folder",
    "manifest-dev-zero", "manifest-outside-repo", "manifest-outside-by-glob", "kernel-fifo",
    "kernel-folder", "kernel-dev-zero", "model-fifo", "expected-fifo", "default-expected-fifo",
    "count-divides-by-zero", "count-divides-by-workload", "count-divides-by-difference",
    "count-divides-by-min", "models-x-and-x.vmfb", "models-x-and-x.check",
    "kernel-and-model-collide", "kernel-in-build-folder", "glsl-in-build-folder",
    "kernel-in-own-build-folder", "model-in-build-folder", "model-name-trailing-newline",
    "executable-control-character", "target-with-tab", "path-with-newline",
    "option-with-newline", "function-with-newline", "manifest-with-bom-and-an-error",
    "option-for-a-target-not-built", "object-path-absolute", "object-path-outside",
    "object-path-dollar", "object-path-missing", "object-path-in-build",
})
# Of those, the ones that still run scons: that a loader's refusal is one line, exit 2, no
# traceback and nothing written, whatever the manifest (TOML, a field, a path, a special file,
# a link, code in a string, a collision, a byte order mark, a path inside a kernel).
PLUMBING = frozenset({
    "malformed-toml", "unknown-field", "kernel-missing", "shell-in-path", "inject-model-name",
    "manifest-fifo", "manifest-outside-repo", "count-divides-by-zero", "models-x-and-x.vmfb",
    "manifest-with-bom-and-an-error", "object-path-dollar",
})


def scons_cases(cases: list[Case]) -> list[Case]:
    """The cases a scons run checks: those the loader does not refuse, and the plumbing."""
    return [c for c in cases if c.id not in REFUSED_BY_THE_LOADER or c.id in PLUMBING]


def loader_cases(cases: list[Case]) -> list[Case]:
    """The cases the manifest loader refuses."""
    return [c for c in cases if c.id in REFUSED_BY_THE_LOADER]
