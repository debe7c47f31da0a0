"""Interrupted and parallel builds end exactly where a clean build does; odd names are safe."""
from __future__ import annotations

import hashlib
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import pytest

from conftest import REPO, run_module
from harness import scons_argv
from iree_kernels.core import toolchains
from iree_kernels.core.stat_memo import FILE as MEMO_FILE

TARGETS = "IREE_TARGETS=llvm-cpu,vulkan" + (",cuda" if toolchains.nvcc() else "")


MLP_ON_LLVM_CPU = '[models.mlp]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'
MLP_INPUTS = ["4x8xf32=1", "8x16xf32=0.5", "16xf32=-1 0 1 2 -1 0 1 2 -1 0 1 2 -1 0 1 2"]


def mlp_on_llvm_cpu(project):
    """The mlp model, built for llvm-cpu only; returns the model's path."""
    project.write("kernels/demo.toml", MLP_ON_LLVM_CPU)
    return project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")


def fake_iree_compile(tmp_path, monkeypatch, when_compiling: str) -> None:
    """$IREE_COMPILE: answers --version as iree-compile does; otherwise runs ``when_compiling``, then iree-compile."""
    compiler = tmp_path / "iree-compile"
    real = toolchains.iree_compile()
    compiler.write_text(f"#!{sys.executable}\nimport os, signal, sys\n"
                        f"if '--version' not in sys.argv:\n"
                        + "".join(f"    {line}\n" for line in when_compiling.splitlines())
                        + f"os.execv({real!r}, [{real!r}, *sys.argv[1:]])\n")
    compiler.chmod(0o755)
    monkeypatch.setenv("IREE_COMPILE", str(compiler))


def demo_repo(project):
    """The demo without its real ONNX networks (test_onnx_demo builds those) and its 41-executable
    layers model (test_codegen_cache_builds): what is tested here does not depend on a model's
    size, and they would take most of each build."""
    for folder in ("kernels", "models"):
        shutil.copytree(REPO / folder, project.root / folder,
                        ignore=shutil.ignore_patterns("onnx.toml", "layers.toml", "layers*",
                                                      "squeezenet*", "bvlc_alexnet*"))
    return project


def outputs(project) -> dict[str, str]:
    """sha256 of every file a default build leaves in build/.

    A SIGKILL leaves what the killed build was writing aside (``.tmp-<pid>-*``
    files and folders); the next build removes them, so none is counted out.
    SCons's records (``.sconsign.dblite``) and the build's memo of what it read from files
    (``.file-memo.json``) are not outputs: they hold times.
    """
    build = project.root / "build"
    return {p.relative_to(build).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(build.rglob("*"))
            if p.is_file() and not p.name.startswith((".sconsign", MEMO_FILE))}


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory):
    from conftest import Project
    project = demo_repo(Project(tmp_path_factory.mktemp("clean") / "repo"))
    project.scons("-j1", TARGETS)
    assert not list((project.root / "build").rglob(".tmp-*"))     # only killed writes leave them
    return outputs(project)


@pytest.mark.xdist_group("clean_build")     # one worker makes clean_build, for both
def test_interrupted_builds_end_where_a_clean_build_does(project, clean_build):
    demo_repo(project)
    rng = random.Random(20261129)
    sources = sorted(p for p in (project.root / "kernels").rglob("*") if p.suffix in
                     (".mlir", ".cu", ".glsl", ".c", ".cuh"))
    for attempt in range(8):
        how = (signal.SIGINT, signal.SIGKILL)[attempt % 2]
        delay = rng.uniform(0.2, 3.0)
        edited = rng.choice(sources)
        original = edited.read_bytes()
        edited.write_bytes(original + b"\n// interrupted edit\n")   # an interrupted rebuild, too
        if attempt % 3 == 2:
            project.scons("-c", TARGETS)
        process = subprocess.Popen(scons_argv("-j2", TARGETS), cwd=project.root,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        process.send_signal(how)
        process.wait(timeout=120)
        edited.write_bytes(original)
        print(f"attempt {attempt}: {how.name} after {delay:.2f} s while {edited.name} was "
              f"edited, exit {process.returncode}")
    project.scons("-j2", TARGETS)
    assert outputs(project) == clean_build
    assert project.scons("--question", TARGETS).returncode == 0


@pytest.mark.xdist_group("clean_build")     # one worker makes clean_build, for both
def test_parallel_build_is_byte_identical_to_serial(project, clean_build):
    demo_repo(project)
    project.scons("-j4", TARGETS, fresh=True)          # another hash seed than clean_build's
    assert outputs(project) == clean_build


def test_spaces_and_non_ascii_in_paths_work(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.copy(REPO / "kernels/llvm-cpu/mlp_square_relu.mlir", "kernels/my kernels/ünï edit.mlir")
    project.write("kernels/demo.toml", """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/my kernels/ünï edit.mlir"
""")
    project.scons()
    assert '"--iree-hal-substitute-executable-source=main_dispatch_1=kernels/my kernels/ünï edit.mlir"' \
        in project.read("build/llvm-cpu/mlp/substitutions.flags")
    assert run_module(project.root / "build/llvm-cpu/mlp.vmfb", "local-sync", "main",
                      MLP_INPUTS) == "4xf32=344 344 344 344"


def test_dollar_in_executable_names_as_onnx_imports_make_them(project):
    project.write("models/mlp.mlir", (REPO / "models/mlp.mlir").read_text()
                  .replace("func.func @main(", 'func.func @"main$async"('))
    project.write("kernels/demo.toml", MLP_ON_LLVM_CPU)
    project.scons("dump")
    dumped = project.root / "build/llvm-cpu/mlp/dump/sources/module_main$async_dispatch_1.mlir"
    edited = dumped.read_text().replace(
        "%10 = arith.addf %9, %out : f32",
        "%sq = arith.mulf %9, %9 : f32\n          %10 = arith.addf %sq, %out : f32")
    project.write("kernels/edit.mlir", edited)
    project.write("kernels/demo.toml", MLP_ON_LLVM_CPU + """
[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main$async_dispatch_1"
file = "kernels/edit.mlir"
""")
    project.scons()
    assert run_module(project.root / "build/llvm-cpu/mlp.vmfb", "local-sync", "main$async",
                      MLP_INPUTS) == "4xf32=344 344 344 344"


def test_a_program_path_with_a_space(project, tmp_path, monkeypatch):
    elsewhere = tmp_path / "My Tools" / "bin"
    elsewhere.mkdir(parents=True)
    (elsewhere / "iree-compile").symlink_to(toolchains.iree_compile())
    monkeypatch.setenv("IREE_COMPILE", str(elsewhere / "iree-compile"))
    mlp_on_llvm_cpu(project)
    assert project.scons().ran("IREE") == ["build/llvm-cpu/mlp.vmfb"]


def test_a_tool_killed_mid_write_leaves_nothing_taken_as_up_to_date(project, tmp_path, monkeypatch):
    """iree-compile dies writing the module; the edit is undone: the next build must not keep the half."""
    marker = tmp_path / "kill-mid-write"      # scons passes tools a clean environment: a file says
    fake_iree_compile(tmp_path, monkeypatch, f"""if os.path.exists({str(marker)!r}):
    with open(sys.argv[sys.argv.index("-o") + 1], "w") as out:
        out.write("half a module")
    os.kill(os.getpid(), signal.SIGKILL)""")
    model = mlp_on_llvm_cpu(project)
    project.scons()
    module = project.root / "build/llvm-cpu/mlp.vmfb"
    built = module.read_bytes()
    original = model.read_text()
    model.write_text(original + "// an edit\n")
    marker.touch()
    assert project.scons(expect_ok=False).returncode != 0
    assert not list((project.root / "build/llvm-cpu").glob(".tmp-*"))
    marker.unlink()
    model.write_text(original)
    # The compile was killed (a model with no kernels is one plain compile): it runs again and
    # gives the module it gave before.
    assert project.scons().ran("IREE") == ["build/llvm-cpu/mlp.vmfb"]
    assert module.read_bytes() == built
    assert project.scons("--question").returncode == 0


def test_a_tool_that_writes_nothing_is_one_error_naming_the_target(project, tmp_path, monkeypatch):
    fake_iree_compile(tmp_path, monkeypatch, "sys.exit(0)")
    mlp_on_llvm_cpu(project)
    build = project.scons("build/llvm-cpu/mlp.vmfb", expect_ok=False)
    assert build.returncode == 2
    assert ("scons: *** [build/llvm-cpu/mlp.vmfb] the command wrote no "
            "build/llvm-cpu/mlp.vmfb" in build.output)
    assert "Traceback" not in build.output


def test_an_edit_in_the_second_a_build_read_the_file_is_seen(project):
    """SCons compares file times in whole seconds; with the one-second drift the project sets,
    an edit in the second whose signature .sconsign keeps would be missed once it is over."""
    model = mlp_on_llvm_cpu(project)
    second = int(time.time()) - 10          # a whole second, over
    os.utime(model, (second + 0.1, second + 0.1))
    project.scons()
    model.write_text(model.read_text() + "// an edit\n")
    os.utime(model, (second + 0.9, second + 0.9))
    assert project.scons().ran("IREE") == ["build/llvm-cpu/mlp.vmfb"]
    assert project.scons("--question").returncode == 0


def _kept_signature(project, database: str, path: str) -> str:
    """The content signature ``database`` keeps for ``path`` (SCons's own sconsign tool)."""
    listing = subprocess.run(
        [sys.executable, "-m", "SCons.Utilities.sconsign", "--csig", "-e", os.path.basename(path),
         database], cwd=project.root, capture_output=True, text=True, timeout=60, check=True)
    entry = f"{os.path.basename(path)}: "
    return next(line[len(entry):].strip() for line in listing.stdout.splitlines()
                if line.startswith(entry))


@pytest.mark.parametrize("given, algorithm, database", [
    ((), "sha256", "build/.sconsign.dblite"),
    (("--hash-format=md5",), "md5", "build/.sconsign_md5.dblite")])
def test_files_are_hashed_with_sha256_unless_a_format_is_given(project, given, algorithm,
                                                                database):
    """SHA-256 runs on the CPU's SHA extensions, over twice MD5's speed on a model's big files;
    the database keeps SCons's name, in the build folder, and a --hash-format given wins."""
    mlp_on_llvm_cpu(project)
    project.scons(*given)
    module = project.root / "build/llvm-cpu/mlp.vmfb"
    assert _kept_signature(project, database, "build/llvm-cpu/mlp.vmfb") == \
        hashlib.new(algorithm, module.read_bytes()).hexdigest()
    assert project.scons("--question", *given).returncode == 0
