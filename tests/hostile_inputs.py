"""The catalogue, continued: strings that would run code, files that would hang, names that collide.

Cases as in bad_inputs.py, run by tests/e2e/test_hostile_inputs.py (with scons)
and, for those refused while the manifests are read, by
tests/unit/test_manifest_catalogue.py (on the loader).
"""
from __future__ import annotations

import gzip

from bad_inputs import (BASE, C, EW, FIFO, FOLDER, GLSL, PWNED, SQUARE, Case, Link, line_of, sub)
from harness import REPO
from iree_kernels.release.archive import archive_bytes

# SCons evaluates ${...} as Python, $TARGET as a variable, $(...) as signature markers; a
# shell would run $(...) and backticks. Each would create PWNED beside or inside the repo.
# No '/', no spaces and no '"': the payload must fit a folder name and a TOML string.
PAYLOAD = (f"${{__import__('pathlib').Path('..','{PWNED}').touch()}}"
           f"$(touch${{IFS}}{PWNED})`touch${{IFS}}{PWNED}`$TARGET$$")
P = PAYLOAD
EXPECTED = ('[[case]]\nfunction = "main"\ninputs = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1"]\n'
            'outputs = ["4xf32=1"]\n')
CHECK = ("check", "IREE_TARGETS=llvm-cpu")
EW_ONLY = '[models.ew]\nsource = "models/ew.mlir"\ntargets = ["llvm-cpu", "{0}"]\n'
MLP_ONLY = '[models.mlp]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'


def tarfile_bytes(members: list[tuple[str, bytes]]) -> bytes:
    """An uncompressed tar of ``members`` (name, content), in that order, names repeated as given."""
    import io
    import tarfile
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def expected_case(**fields) -> str:
    """models/mlp.expected.toml with one case, ``fields`` replacing the defaults."""
    case = {"function": '"main"', "inputs": '["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1"]',
            "outputs": '["4xf32=1"]', **fields}
    return "[[case]]\n" + "".join(f"{k} = {v}\n" for k, v in case.items())


def with_object(path: str) -> str:
    """The square kernel naming ``path`` as an external object (in a comment: read all the same)."""
    return SQUARE + f'// #hal.executable.object<{{path = "{path}"}}>\n'


OBJECT_LINE = len(with_object("x").splitlines())
SEGFAULT = SQUARE.replace("main_dispatch_1", "main_dispatch_0")   # mlp's executable, ew's name

# --- strings that reach SCons: refused where they name a path or a name, never run -------------
INJECTION = [
    Case("inject-passes", MLP_ONLY + '\n[[substitutions]]\nmodel = "mlp"\ntarget = "llvm-cpu"\n'
         f'executable = "main_dispatch_0"\npasses = "builtin.module(func.func({P}))"\n',
         "field 'passes': the pipeline holds '(' where a pass option was expected"),
    Case("inject-folder-file", MLP_ONLY + '\n[[substitutions]]\nmodel = "mlp"\n'
         'target = "llvm-cpu"\nfrom = "kernels/f"\n',
         "contains '$'", files={f"kernels/f/main_dispatch_0{P}.mlir": "x"}),
    Case("inject-model-name", BASE.replace("[models.ew]", f'[models."{P}"]'),
         "model names may use letters, digits"),
    Case("inject-source", BASE.replace("models/ew.mlir", f"models/{P}.mlir"),
         f"field 'source': path 'models/{P}.mlir' contains '$'"),
    Case("inject-expected-path", BASE.replace('targets = ["llvm-cpu", "vulkan", "cuda"]\n\n[models.ew]',
                                              f'expected = "models/{P}.toml"\n\n[models.ew]'),
         f"field 'expected': path 'models/{P}.toml' contains '$'"),
    Case("inject-model-target", BASE.replace('"cuda"]\n\n[models.ew]', f'"{P}"]\n\n[models.ew]'),
         f"field 'targets': unknown target '{P}'"),
    Case("inject-option-name", MLP_ONLY + f'options = {{ llvm-cpu = ["--{P}"] }}\n',
         "kernels/demo.toml:4: models.mlp: field 'options': options.llvm-cpu: iree-compile has no "
         "option '--${__import__('pathlib')"),
    Case("inject-option-value", MLP_ONLY + f'options = {{ llvm-cpu = ["--iree-opt-level={P}"] }}\n',
         "scons: *** kernels/demo.toml:4: models.mlp: field 'options': options.llvm-cpu: "
         f"iree-compile: iree-compile: for the --iree-opt-level option: '{P}' value not a valid "
         "optimization level",
         absent="build/llvm-cpu/mlp.vmfb"),
    Case("inject-substitution-model", BASE + sub(model=P), f"field 'model': unknown model '{P}'"),
    Case("inject-substitution-target", BASE + sub(target=P),
         f"field 'file': an MLIR hal.executable source cannot replace an executable of target '{P}'"),
    Case("inject-executable", BASE + sub(executable=P),
         f"field 'executable': model 'mlp' has no executable '{P}' for target 'llvm-cpu'",
         args=("IREE_TARGETS=llvm-cpu",), absent="build/llvm-cpu/mlp.vmfb"),
    Case("inject-kernel-path", BASE + sub(file=f"kernels/{P}.mlir"),
         f"field 'file': path 'kernels/{P}.mlir' contains '$'"),
    Case("inject-mode", BASE + sub(mode=P), f"field 'mode': unknown mode '{P}'"),
    Case("inject-function", BASE + sub(file="kernels/k.c", workgroup_count=[1], function=P),
         f"field 'function': '{P}' is not a C function name"),
    Case("inject-workgroup-count", BASE + sub(file="kernels/k.c", workgroup_count=[P]),
         "field 'workgroup_count':"),
    Case("inject-workgroup-count-call", BASE + sub(file="kernels/k.c",
                                                   workgroup_count=["__import__('os').getpid()"]),
         "field 'workgroup_count': '__import__('os').getpid()' is not allowed"),
    Case("inject-workgroup-size", BASE + sub(target="cuda", file="kernels/k.cu", mode="wrapped",
                                             workgroup_count=[1], workgroup_size=[P], **EW),
         "field 'workgroup_size': a wrapped GPU kernel needs workgroup_size",
         files={"kernels/k.cu": ""}),
    Case("inject-manifest-kernel-include", BASE + sub(file="kernels/k.c", workgroup_count=[1], **EW),
         "kernels/k.c:1:10: fatal error:", needs="clang",
         files={"kernels/k.c": f'#include "{P}.h"\n' + C}, args=("IREE_TARGETS=llvm-cpu",),
         absent="build/kernels/k.o"),
    Case("inject-expected-input-path", BASE, f"field 'inputs': '@models/{P}.bin': path",
         files={"models/mlp.expected.toml": expected_case(inputs=f'["@models/{P}.bin"]')}, args=CHECK),
    Case("inject-expected-output-path", BASE, f"field 'outputs': '@{P}': path",
         files={"models/mlp.expected.toml": expected_case(outputs=f'["@{P}"]')}, args=CHECK),
    Case("inject-expected-function", BASE, f"does not produce the expected outputs of @{P}",
         files={"models/mlp.expected.toml": expected_case(function=f'"{P}"')}, args=CHECK,
         absent="build/llvm-cpu/mlp.check"),
    Case("inject-expected-input", BASE, "does not produce the expected outputs of @main",
         files={"models/mlp.expected.toml": expected_case(inputs=f'["{P}"]')}, args=CHECK,
         absent="build/llvm-cpu/mlp.check"),
    Case("inject-expected-targets", BASE, f"field 'targets': unknown target '{P}'",
         files={"models/mlp.expected.toml": expected_case(targets=f'["{P}"]')}, args=CHECK),
    Case("inject-unknown-variable", BASE, "unknown command-line variable", args=(f"{P}=1",)),
    Case("inject-scaffold", BASE, f"SCAFFOLD: model 'mlp' has no executable '{P}'",
         args=("scaffold", f"SCAFFOLD=mlp/llvm-cpu/{P}", "LANGUAGE=c"),
         shows=f"SCAFFOLD mlp/llvm-cpu/{P}"),
    Case("inject-cache-dir-environment", BASE, ("CACHE_DIR (default", "from the environment): '$' "
                                                "is not allowed in a path"),
         env={"IREE_KERNELS_CACHE_DIR": f"/tmp/{P}"}),
    Case("inject-iree-compile-path", MLP_ONLY, f"cannot run /nonexistent/{P}/iree-compile",
         env={"IREE_COMPILE": f"/nonexistent/{P}/iree-compile"}, absent="build/llvm-cpu/mlp.vmfb"),
    Case("inject-nvcc-path", EW_ONLY.format("cuda") + sub(target="cuda", file="kernels/k.cu", **EW),
         "nvcc is not installed", env={"NVCC": f"/nonexistent/{P}/nvcc"},
         files={"kernels/k.cu": ""}, present="build/llvm-cpu/ew.vmfb"),
]
PATH_VARIABLES = ["BUILD_DIR", "MANIFESTS", "SCAFFOLD_MANIFEST", "CACHE_DIR", "CODEGEN_CACHE_DIR",
                  "ARCHIVE"]
VALUE_VARIABLES = ["IREE_TARGETS", "VERBOSE", "PROGRESS", "CUDA_COMPILER", "CUDA_ARCH", "HIP_ARCH",
                   "PTX_ISA_VERSION", "GLSL_COMPILER", "DUMP", "LANGUAGE", "CACHE_READONLY",
                   "EXECUTABLE_CACHE", "IREE_COMPILE_TIMEOUT", "KERNEL_COMPILE_TIMEOUT",
                   "RUN_TIMEOUT", "VERSION_TIMEOUT", "LOCK_WAIT"]
INJECTION += [Case(f"inject-variable-{name}", BASE,
                   (f"scons: *** {name}=", f"'$' is not allowed in a "
                    f"{'path' if name in PATH_VARIABLES else 'value'} here"),
                   args=(f"{name}={P}",)) for name in PATH_VARIABLES + VALUE_VARIABLES]

# --- files that are not regular files, and tools that do not return -----------------------------
HANGS = [
    Case("manifest-fifo", BASE, "kernels/x.toml: a manifest is a FIFO (named pipe), not a regular "
         "file", files={"kernels/x.toml": FIFO}),
    Case("manifest-folder", BASE, "kernels/x.toml: a manifest is a folder, not a regular file",
         files={"kernels/x.toml": FOLDER}),
    Case("manifest-dev-zero", BASE, "kernels/z.toml: a manifest is a character device, not a "
         "regular file", files={"kernels/z.toml": Link("/dev/zero")}),
    Case("manifest-outside-repo", BASE, ("kernels/o.toml: the manifest is a link to ",
                                         "outside the repository"),
         files={"kernels/o.toml": Link(str(REPO / "kernels/demo.toml"))}),
    Case("manifest-outside-by-glob", BASE, "outside.toml: the manifest lies, outside the "
         "repository", files={"../outside.toml": MLP_ONLY}, args=("MANIFESTS=../*.toml",)),
    Case("kernel-fifo", BASE + sub(file="kernels/f.mlir"), "field 'file': 'kernels/f.mlir' is a "
         "FIFO (named pipe), not a regular file", files={"kernels/f.mlir": FIFO}),
    Case("kernel-folder", BASE + sub(file="kernels/d.mlir"), "field 'file': 'kernels/d.mlir' is a "
         "folder, not a regular file", files={"kernels/d.mlir": FOLDER}),
    Case("kernel-dev-zero", BASE + sub(file="kernels/z.mlir"), "field 'file': 'kernels/z.mlir' is "
         "outside the repository", files={"kernels/z.mlir": Link("/dev/zero")}),
    Case("header-fifo", BASE + sub(file="kernels/k.c", workgroup_count=[1], **EW),
         "kernels/fifo.h: an included file is a FIFO (named pipe), not a regular file",
         needs="clang", files={"kernels/k.c": '#include "fifo.h"\n' + C, "kernels/fifo.h": FIFO},
         args=("IREE_TARGETS=llvm-cpu",), absent="build/kernels/k.o"),
    Case("model-fifo", BASE.replace("models/ew.mlir", "models/f.mlir"), "kernels/demo.toml:7: "
         "models.ew: field 'source': 'models/f.mlir' is a FIFO", files={"models/f.mlir": FIFO}),
    Case("expected-fifo", BASE.replace('targets = ["llvm-cpu", "vulkan", "cuda"]\n\n[models.ew]',
                                       'expected = "models/f.toml"\n\n[models.ew]'),
         "field 'expected': 'models/f.toml' is a FIFO", files={"models/f.toml": FIFO}),
    Case("default-expected-fifo", BASE, "models.mlp: field 'source': its expected outputs: "
         "'models/mlp.expected.toml' is a FIFO", files={"models/mlp.expected.toml": FIFO}),
    Case("expected-input-fifo", BASE, "field 'inputs': '@models/in.bin': 'models/in.bin' is a FIFO",
         files={"models/in.bin": FIFO,
                "models/mlp.expected.toml": expected_case(inputs='["@models/in.bin"]')}, args=CHECK),
    Case("iree-compile-hangs", MLP_ONLY, ("scons: *** [build/llvm-cpu/mlp", "] iree-compile did "
         "not finish within 1 s and was stopped; a tool that takes longer needs "
         "IREE_COMPILE_TIMEOUT=SECONDS"),
         tools={"IREE_COMPILE": "if '-o' in sys.argv: time.sleep(60)\nos.execv(REAL, [REAL, *sys.argv[1:]])"},
         args=("IREE_COMPILE_TIMEOUT=1",), absent="build/llvm-cpu/mlp.vmfb"),
    Case("kernel-compiler-hangs", BASE + sub(file="kernels/k.c", workgroup_count=[1], **EW),
         "[build/kernels/k.o] clang did not finish within 1 s and was stopped; a tool that takes "
         "longer needs KERNEL_COMPILE_TIMEOUT=SECONDS", needs="clang",
         tools={"CLANG": "if '-c' in sys.argv: time.sleep(60)\nos.execv(REAL, [REAL, *sys.argv[1:]])"},
         args=("IREE_TARGETS=llvm-cpu", "KERNEL_COMPILE_TIMEOUT=1"), absent="build/kernels/k.o"),
    Case("version-hangs", MLP_ONLY, "iree-compile --version did not answer within 1 s",
         tools={"IREE_COMPILE": "if '--version' in sys.argv: time.sleep(60)\n"
                                "os.execv(REAL, [REAL, *sys.argv[1:]])"},
         args=("VERSION_TIMEOUT=1",), absent="build/llvm-cpu/mlp.vmfb"),
    Case("timeout-not-a-number", BASE, "IREE_COMPILE_TIMEOUT=soon: expected a number of seconds",
         args=("IREE_COMPILE_TIMEOUT=soon",)),
    Case("timeout-negative", BASE, "RUN_TIMEOUT=-5: expected a number of seconds",
         args=("RUN_TIMEOUT=-5",)),
]

# --- what would pass validation and fail later, or collide ---------------------------------------
VALIDATION = [
    Case("count-divides-by-zero", BASE + sub(file="kernels/k.c", workgroup_count=["w0 // 0"]),
         "field 'workgroup_count': 'w0 // 0' divides by '0', which is zero"),
    Case("count-divides-by-workload", BASE + sub(file="kernels/k.c",
                                                 workgroup_count=["ceildiv(w0, w1)"]),
         "'ceildiv(w0, w1)' divides by 'w1', which can be zero (a workload value can be 0); "
         "divide by a positive integer or by max(w1, 1)"),
    Case("count-divides-by-difference", BASE + sub(file="kernels/k.c",
                                                   workgroup_count=["1", "w0 // (w1 - 1)"]),
         "'w0 // (w1 - 1)' divides by 'w1 - 1', which can be zero"),
    Case("count-divides-by-min", BASE + sub(file="kernels/k.c", workgroup_count=["w0 // min(w0, 8)"]),
         "divides by 'min(w0, 8)', which can be zero"),
    Case("iree-compile-error-exit-0", MLP_ONLY, ("scons: *** [build/llvm-cpu/mlp", "] iree-compile "
         "exited 0 but printed an error: models/mlp.mlir:3:5: error: 'linalg.matmul' op went wrong"),
         tools={"IREE_COMPILE": "if '-o' in sys.argv:\n"
                "    print(\"models/mlp.mlir:3:5: error: 'linalg.matmul' op went wrong\")\n"
                "    open(sys.argv[sys.argv.index('-o') + 1], 'w').write('not a module')\n"
                "    sys.exit(0)\nos.execv(REAL, [REAL, *sys.argv[1:]])"},
         absent="build/llvm-cpu/mlp.vmfb"),
    Case("models-x-and-x.vmfb", MLP_ONLY.replace("mlp]", "x]") + "\n" +
         MLP_ONLY.replace("mlp]", '"x.vmfb"]'), "kernels/demo.toml:1: models.x: model 'x' and model "
         "'x.vmfb' (kernels/demo.toml:5) would both write build/llvm-cpu/x.vmfb: a file for model "
         "'x', a folder for model 'x.vmfb'; rename one"),
    Case("models-x-and-x.check", MLP_ONLY.replace("mlp]", "x]") + "\n" +
         MLP_ONLY.replace("mlp]", '"x.check"]'), "model 'x' and model 'x.check' (kernels/demo.toml:5) "
         "would both write build/llvm-cpu/x.check"),
    Case("kernel-and-model-collide", EW_ONLY.format("cuda").replace("ew]", "k]")
         + sub(model="k", target="cuda", executable="main_dispatch_0", file="cuda/k.vmfb/x.cu"),
         "kernels/demo.toml:1: models.k: model 'k' and kernel cuda/k.vmfb/x.cu (kernels/demo.toml:5) "
         "would both write build/cuda/k.vmfb", files={"cuda/k.vmfb/x.cu": ""}),
    Case("kernel-in-build-folder", BASE + sub(file="build/k.mlir"), "field 'file': 'build/k.mlir' is "
         "inside the build folder (build/), which holds what the build makes",
         files={"build/k.mlir": SQUARE}),
    Case("glsl-in-build-folder", BASE + sub(target="vulkan", file="build/kernels/k.glsl", **EW),
         "field 'file': 'build/kernels/k.glsl' is inside the build folder",
         files={"build/kernels/k.glsl": GLSL}),
    Case("kernel-in-own-build-folder", BASE + sub(file="out/k.mlir"), "'out/k.mlir' is inside the "
         "build folder (out/)", files={"out/k.mlir": SQUARE}, args=("BUILD_DIR=out",)),
    Case("model-in-build-folder", BASE.replace("models/ew.mlir", "build/ew.mlir"),
         "field 'source': 'build/ew.mlir' is inside the build folder",
         files={"build/ew.mlir": (REPO / "models/elementwise.mlir").read_text()}),
    Case("model-name-trailing-newline", BASE.replace("[models.ew]", '[models."ew\\n"]'),
         "kernels/demo.toml: models.ew\\n: model names may use letters"),
    Case("executable-control-character", BASE + sub(executable="main_dispatch_1\\u0007"),
         "field 'executable': 'main_dispatch_1\\x07' contains the control character '\\x07'"),
    Case("target-with-tab", BASE + sub(target="llvm-cpu\\t"),
         "field 'target': must be a non-empty string without spaces"),
    Case("path-with-newline", BASE + sub(file="kernels/k.mlir\\n"),
         "field 'file': path 'kernels/k.mlir\\n' contains '\\n'"),
    Case("option-with-newline", MLP_ONLY + 'options = { llvm-cpu = ["--iree-opt-level=O3\\n"] }\n',
         "field 'options': options.llvm-cpu: flag '--iree-opt-level=O3\\n' contains the control "
         "character '\\n'"),
    Case("function-with-newline", BASE + sub(file="kernels/k.c", workgroup_count=[1],
                                             function="saxpy\\n"),
         "field 'function': 'saxpy\\n' is not a C function name"),
    Case("variable-with-newline", BASE, "CUDA_ARCH='sm_80\\n': contains the control character",
         args=("CUDA_ARCH=sm_80\n",)),
    Case("expected-function-with-newline", BASE, "field 'function': 'main\\n' contains the control",
         files={"models/mlp.expected.toml": expected_case(function='"main\\n"')}, args=CHECK),
    Case("spirv-val-missing", EW_ONLY.format("vulkan") + sub(target="vulkan", file="kernels/k.glsl",
                                                              **EW),
         "[build/.missing-tools] spirv-val is not installed: apt-get install spirv-tools "
         "(./setup.sh does); not built: build/vulkan/ew.vmfb", needs="glslangValidator",
         files={"kernels/k.glsl": GLSL}, env={"SPIRV_VAL": "/nonexistent/spirv-val"},
         present="build/llvm-cpu/ew.vmfb", absent="build/vulkan/ew.vmfb"),
    Case("ptxas-missing", EW_ONLY.format("cuda") + sub(target="cuda", file="kernels/k.ptx", **EW),
         "[build/.missing-tools] ptxas is not installed: it comes with nvcc (./setup.sh); not "
         "built: build/cuda/ew.vmfb", env={"PTXAS": "/nonexistent/ptxas"},
         present="build/llvm-cpu/ew.vmfb", absent="build/cuda/ew.vmfb"),
]

# --- messages that say where -------------------------------------------------------------------
MESSAGES = [
    Case("manifest-with-bom-and-an-error", "\ufeff" + BASE + sub(fiel="x"),
         "kernels/demo.toml:15: [[substitutions]] #1: unknown field 'fiel' (did you mean 'file'?)"),
    Case("option-dotted-key", MLP_ONLY + 'options.llvm-cpu = ["--iree-opt-levl=O3"]\n',
         "kernels/demo.toml:4: models.mlp: field 'options': options.llvm-cpu: iree-compile has no "
         "option '--iree-opt-levl' (did you mean '--iree-opt-level'?)"),
    Case("option-sub-table", MLP_ONLY + '\n[models.mlp.options]\nllvm-cpu = ["--iree-bogus"]\n',
         "kernels/demo.toml:5: models.mlp: field 'options': options.llvm-cpu: iree-compile has no "
         "option '--iree-bogus'"),
    Case("option-for-a-target-not-built", MLP_ONLY + '\n[models.mlp.options]\ncuda = ["-O3"]\n',
         "kernels/demo.toml:5: models.mlp: field 'options': options for target 'cuda', which this "
         "model is not built for (targets: llvm-cpu)"),
    Case("glsl-for-a-missing-executable", BASE + sub(target="vulkan", file="kernels/k.glsl",
                                                     model="ew", executable="main_dispatch_9"),
         "kernels/demo.toml:13: [[substitutions]] #1 (executable 'main_dispatch_9' of ew/vulkan): "
         "field 'executable': model 'ew' has no executable 'main_dispatch_9' for target 'vulkan' "
         "(did you mean 'main_dispatch_0'?); its executables: main_dispatch_0",
         needs="glslangValidator", files={"kernels/k.glsl": GLSL}, args=("IREE_TARGETS=vulkan",),
         absent="build/vulkan/ew.vmfb"),
    Case("spirv-local-size-points-at-the-source", BASE + sub(
        target="vulkan", file="kernels/k.glsl", mode="wrapped", workgroup_size=[32],
        workgroup_count=[1], **EW),
         ("kernels/demo.toml:10: [[substitutions]] #1 (executable 'main_dispatch_0' of ew/vulkan): "
          "kernel kernels/k.glsl (compiled to build/vulkan/ew/main_dispatch_0.spv): ",
          f"(at kernels/k.glsl:{line_of(GLSL, 'local_size_x')})"),
         needs="glslangValidator", files={"kernels/k.glsl": GLSL}, args=("IREE_TARGETS=vulkan",)),
    Case("wrong-shape-source-crashes-iree-compile", BASE + sub(file="kernels/k.mlir", **EW),
         "[build/llvm-cpu/ew.vmfb] iree-compile crashed (SIGSEGV); it was compiling with the "
         "substituted executables main_dispatch_0 (kernels/k.mlir)",
         files={"kernels/k.mlir": SEGFAULT}, args=("IREE_TARGETS=llvm-cpu",),
         absent="build/llvm-cpu/ew.vmfb"),
]

# --- the repo-path rule, where paths are written inside files -------------------------------------
PATHS = [
    Case("object-path-absolute", BASE + sub(), f"field 'file': kernels/k.mlir:{OBJECT_LINE}: the "
         "#hal.executable.object path: '/etc/passwd' is absolute",
         files={"kernels/k.mlir": with_object("/etc/passwd")}),
    Case("object-path-outside", BASE + sub(), "the #hal.executable.object path: '../k.o' is "
         "outside the repository", files={"kernels/k.mlir": with_object("../k.o")}),
    Case("object-path-dollar", BASE + sub(), f"the #hal.executable.object path: path '{P}.o' "
         "contains '$'", files={"kernels/k.mlir": with_object(f"{P}.o")}),
    Case("object-path-missing", BASE + sub(), "the #hal.executable.object path: file not found: "
         "kernels/none.o", files={"kernels/k.mlir": with_object("kernels/none.o")}),
    Case("object-path-in-build", BASE + sub(), "the #hal.executable.object path: 'build/k.o' is "
         "inside the build folder", files={"kernels/k.mlir": with_object("build/k.o")}),
    Case("expected-path-outside", BASE, "field 'inputs': '@../in.npy': '../in.npy' is outside "
         "the repository", files={"models/mlp.expected.toml": expected_case(inputs='["@../in.npy"]')},
         args=CHECK),
    Case("expected-path-absolute", BASE, "field 'outputs': '@/etc/passwd': '/etc/passwd' is "
         "absolute", files={"models/mlp.expected.toml": expected_case(outputs='["@/etc/passwd"]')},
         args=CHECK),
    Case("expected-path-in-build", BASE, "'@build/llvm-cpu/mlp.vmfb': 'build/llvm-cpu/mlp.vmfb' is "
         "inside the build folder", files={"models/mlp.expected.toml": expected_case(
             inputs='["@build/llvm-cpu/mlp.vmfb"]')}, args=CHECK),
    Case("expected-path-on-clean", BASE, f"field 'inputs': '@{P}': path",
         files={"models/mlp.expected.toml": expected_case(inputs=f'["@{P}"]')}, args=("-c",)),
    Case("scaffold-through-a-linked-folder", BASE, "kernels/llvm-cpu is a symbolic link; "
         "scaffold never writes through one", files={"../elsewhere": FOLDER,
                                                     "kernels/llvm-cpu": Link("../../elsewhere")},
         args=("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_0", "LANGUAGE=mlir")),
    Case("scaffold-manifest-through-a-link", BASE, "kernels/out is a symbolic link; scaffold "
         "never writes through one", files={"../elsewhere": FOLDER,
                                            "kernels/out": Link("../../elsewhere")},
         args=("scaffold", "SCAFFOLD=mlp/llvm-cpu/main_dispatch_0", "LANGUAGE=mlir",
               "SCAFFOLD_MANIFEST=kernels/out/x.toml", "MANIFESTS=kernels/**/*.toml")),
    Case("scons-lock-a-link", BASE, "build/.scons-lock is a symbolic link; the build never "
         "writes through one", files={"build/.scons-lock": Link("../../created-outside")}),
    Case("scons-lock-a-fifo", BASE, "build/.scons-lock is a FIFO (named pipe), not a regular file",
         files={"build/.scons-lock": FIFO}),
    Case("build-dir-absolute", BASE, "BUILD_DIR=/tmp/iree-kernels-abs-build: an absolute path; "
         "give a folder inside the repository", args=("BUILD_DIR=/tmp/iree-kernels-abs-build",)),
    Case("build-dir-outside", BASE, "BUILD_DIR='../out': not a folder inside the repository",
         args=("BUILD_DIR=../out",)),
    Case("build-dir-root", BASE, "BUILD_DIR='.': not a folder inside the repository",
         args=("BUILD_DIR=.",)),
]

EMPTY_LOCK = b'{"format": 1, "source_date_epoch": 0, "modules": []}'
VERIFY = ("verify-release", "ARCHIVE=r.tar.gz", "IREE_TARGETS=llvm-cpu")
RELEASES = [
    Case("release-empty-lock", BASE, "r.tar.gz: lock.json lists no modules: nothing to verify",
         files={"r.tar.gz": archive_bytes({"lock.json": EMPTY_LOCK,
                                                   "build/llvm-cpu/mlp.vmfb": b"evil"}, 0)},
         args=VERIFY),
    Case("release-fifo", BASE, "r.tar.gz: the release archive is a FIFO (named pipe), not a "
         "regular file", files={"r.tar.gz": FIFO}, args=VERIFY),
    Case("release-dev-zero", BASE, "r.tar.gz: the release archive is a character device",
         files={"r.tar.gz": Link("/dev/zero")}, args=VERIFY),
    Case("release-second-lock", BASE, "r.tar.gz: member lock.json is in the archive twice",
         files={"r.tar.gz": gzip.compress(tarfile_bytes([("lock.json", EMPTY_LOCK),
                                                         ("lock.json", b"{}")]))},
         args=VERIFY),
    Case("key-file-fifo", BASE, "IREE_KERNELS_CACHE_KEY_FILE: cannot read key: is a FIFO (named "
         "pipe), not a regular file", files={"key": FIFO},
         env={"IREE_KERNELS_CACHE_KEY_FILE": "key"}),
    Case("key-file-dev-zero", BASE, "IREE_KERNELS_CACHE_KEY_FILE: cannot read /dev/zero: is a "
         "character device", env={"IREE_KERNELS_CACHE_KEY_FILE": "/dev/zero"}),
]

CASES = INJECTION + HANGS + VALIDATION + MESSAGES + PATHS + RELEASES
