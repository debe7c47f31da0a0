"""The catalogue, continued (tests/hostile_inputs.py): strings that would run code, files that
would hang, names that collide; and strings the build accepts, which must still run nothing.

Each case is checked as in test_bad_inputs.py (``run_bad_input``): the first
error line, the exit status, no traceback, nothing taken as up to date, nothing
changed outside the repo, and nothing created by a string run as code. Most
cases fail while the manifests are read: tests/unit/test_manifest_catalogue.py
checks those on the loader, and a few here (bad_inputs.PLUMBING) with scons.
"""
from __future__ import annotations

import fcntl
import os
import shutil

import pytest

import bad_inputs
import hostile_inputs
from bad_inputs import PWNED, SQUARE, run_bad_input, sub
from conftest import REPO
from harness import scons
from hostile_inputs import EW_ONLY, MLP_ONLY, P, PAYLOAD
from iree_kernels.core import toolchains

CASES = bad_inputs.scons_cases(hostile_inputs.CASES)


def test_the_catalogue_holds_a_hundred_cases():
    assert len(bad_inputs.CASES) + len(hostile_inputs.CASES) >= 100
    every = bad_inputs.CASES + hostile_inputs.CASES
    assert len({c.id for c in every}) == len(every)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_hostile_input(project, case, monkeypatch, tmp_path):
    if case.id == "ptxas-missing" and toolchains.nvcc() is None:
        pytest.skip("no nvcc")
    run_bad_input(project, case, monkeypatch, tmp_path)


# --- strings the build accepts: they must still run nothing ------------------------------------

def test_a_checkout_in_a_folder_named_like_code_runs_nothing(tmp_path, monkeypatch):
    """A CI workspace named after a branch: the programs in .venv then have ${...} in their paths."""
    checkout = tmp_path / PAYLOAD / "repo"
    for folder in ("site_scons", "models"):
        shutil.copytree(REPO / folder, checkout / folder,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "SConstruct", checkout / "SConstruct")
    (checkout / "kernels").mkdir()
    (checkout / "models/elementwise.expected.toml").unlink()    # saxpy computes something else
    shutil.copy(REPO / "kernels/llvm-cpu/mlp_square_relu.mlir", checkout / "kernels/square.mlir")
    shutil.copy(REPO / "kernels/cpu/saxpy.c", checkout / "kernels/saxpy.c")
    shutil.copy(REPO / "kernels/vulkan/elementwise.glsl", checkout / "kernels/elementwise.glsl")
    (checkout / "kernels/demo.toml").write_text(
        '[models.mlp]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'
        '[models.ew]\nsource = "models/elementwise.mlir"\ntargets = ["llvm-cpu", "vulkan"]\n'
        + sub(file="kernels/square.mlir", raw="verify = false")     # both compute something else
        + sub(model="ew", executable="main_dispatch_0", file="kernels/saxpy.c",
              workgroup_count=["ceildiv(w0, 64)"], function="saxpy", raw="verify = false")
        + sub(model="ew", target="vulkan", executable="main_dispatch_0",
              file="kernels/elementwise.glsl"))
    tools = checkout / ".venv/bin"             # where ./setup.sh puts them: inside the checkout
    tools.mkdir(parents=True)
    for variable, program in (("IREE_COMPILE", toolchains.iree_compile()),
                              ("CLANG", toolchains.on_path("clang")),
                              ("GLSLANG", toolchains.on_path("glslangValidator")),
                              ("SPIRV_VAL", toolchains.on_path("spirv-val"))):
        if program is None:
            pytest.skip(f"no {variable.lower()}")
        (tools / os.path.basename(program)).symlink_to(program)
        monkeypatch.setenv(variable, str(tools / os.path.basename(program)))
    variables = ["IREE_TARGETS=llvm-cpu,vulkan", "VERBOSE=1"]     # its own site_scons
    # Through the codegen cache too: its ASSEMBLE and CODEGEN lines, short and verbose.
    for args in ([], ["check"], ["release"], ["-c"], ["EXECUTABLE_CACHE=1", "VERBOSE=0"],
                 ["EXECUTABLE_CACHE=1", "-c"], ["EXECUTABLE_CACHE=1"], ["-c"]):
        result = scons(checkout, *variables, *args, site_dir=None)
        assert result.ok, result.failure()
        assert "Traceback" not in result.output
        if not args:
            assert (checkout / "build/vulkan/ew.vmfb").is_file()
            # A path holding '$' is shown by its name (SCons would cut '$(' out of it).
            # (every module here is relinked: the kernels' compilers are the command lines)
            assert "\nclang -target x86_64-unknown-unknown-eabi-elf" in result.stdout
            assert "\nglslangValidator -V --quiet" in result.stdout
        if "VERBOSE=0" in args:
            assert any(p.startswith("build/codegen-cache/llvm-cpu/") for p in result.ran("CODEGEN"))
            assert "build/llvm-cpu/mlp/unlinked/mlp.mlir" in result.ran("ASSEMBLE")
    # A shared cache inside such a checkout would put the folder's name in SCons's CacheDir.
    result = scons(checkout, *variables, "CACHE_DIR=cache", site_dir=None)
    assert result.returncode == 2
    assert result.stdout.startswith(f"scons: *** CACHE_DIR: the cache's path {checkout}/cache "
                                    "contains '$', which SCons would expand"), result.stdout
    assert not (tmp_path / PWNED).exists() and not (checkout / PWNED).exists()
    assert not (tmp_path / PAYLOAD / PWNED).exists()


def test_accepted_strings_with_dollars_run_nothing(project, tmp_path):
    """A manifest's file name, benchmark flags and a scaffolded executable's name may hold '$'."""
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write(f"kernels/{PAYLOAD}.toml", MLP_ONLY)
    build = project.scons(f"IREE_BENCHMARKFLAGS=--benchmark_filter={PAYLOAD}", "-n", "bench")
    assert "Traceback" not in build.output
    project.scons(f"IREE_BENCHMARKFLAGS=--benchmark_filter={PAYLOAD}")
    assert (project.root / "build/llvm-cpu/mlp.vmfb").is_file()
    assert not (tmp_path / PWNED).exists() and not (project.root / PWNED).exists()


def test_an_onnx_style_executable_name_shows_as_it_is(project):
    project.write("models/mlp.mlir", (REPO / "models/mlp.mlir").read_text()
                  .replace("func.func @main(", 'func.func @"main$async"('))
    project.write("kernels/demo.toml", MLP_ONLY)
    build = project.scons("scaffold", "SCAFFOLD=mlp/llvm-cpu/main$async_dispatch_1", "LANGUAGE=mlir")
    assert "SCAFFOLD mlp/llvm-cpu/main$async_dispatch_1" in build.stdout.splitlines()
    assert "main$async_dispatch_1" in project.read("kernels/scaffolded.toml")


def test_a_manifest_with_a_byte_order_mark_is_read(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    (project.root / "kernels").mkdir()
    (project.root / "kernels/demo.toml").write_bytes(b"\xef\xbb\xbf" + MLP_ONLY.encode())
    project.scons()
    assert (project.root / "build/llvm-cpu/mlp.vmfb").is_file()


def test_a_second_scons_in_one_checkout_waits_then_refuses(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MLP_ONLY)
    (project.root / "build").mkdir()
    with open(project.root / "build/.scons-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # as a running scons holds it
        build = project.scons("LOCK_WAIT=0.5", expect_ok=False)
    assert build.returncode == 2
    first = next(line for line in build.output.splitlines() if line.startswith("scons: ***"))
    assert first.startswith("scons: *** another scons is building in this checkout (it holds ")
    assert "waited 0.5 s (LOCK_WAIT)" in first
    assert "Traceback" not in build.output
    assert not (project.root / "build/llvm-cpu").exists()
    project.scons()                             # released: the next one builds


def test_a_look_shares_the_lock_with_looks_and_help_takes_none(project):
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/demo.toml", MLP_ONLY)
    project.scons("IREE_TARGETS=llvm-cpu")
    with open(project.root / "build/.scons-lock") as lock:
        fcntl.flock(lock, fcntl.LOCK_SH)        # as another --question holds it
        assert project.scons("IREE_TARGETS=llvm-cpu", "--question", "LOCK_WAIT=0.5").ok
        fcntl.flock(lock, fcntl.LOCK_EX)        # as a running build holds it
        assert project.scons("-h", "LOCK_WAIT=0.5").ok
        looked = project.scons("-n", "LOCK_WAIT=0.5", expect_ok=False)
    assert "another scons is building in this checkout" in looked.output


def test_executable_names_written_like_code_in_a_model_run_nothing(project, tmp_path):
    """A model's function names become executable names, file names and progress lines."""
    project.write("models/ew.mlir", (REPO / "models/elementwise.mlir").read_text()
                  .replace("func.func @main(", f'func.func @"{PAYLOAD}"('))
    project.write("kernels/demo.toml", EW_ONLY.format("cuda" if toolchains.nvcc() else "vulkan"))
    project.scons()
    build = project.scons("dump", "scaffold", f"SCAFFOLD=ew/llvm-cpu/{PAYLOAD}_dispatch_0",
                          "LANGUAGE=mlir")
    assert f"SCAFFOLD ew/llvm-cpu/{PAYLOAD}_dispatch_0" in build.stdout.splitlines()
    assert f'executable = "{PAYLOAD}_dispatch_0"' in project.read("kernels/scaffolded.toml")
    # (The scaffolded copy does not build: IREE dumps such a name unquoted, '@${...}'.)
    assert not (tmp_path / PWNED).exists() and not (project.root / PWNED).exists()


@pytest.mark.parametrize("target, extra, args", [
    ("llvm-cpu", "verify = false\n", ("verify",)),              # skipped: it computes something else
    ("cuda", "", ("-k", "verify")),                             # skipped here: no CUDA device
], ids=["verify-false", "no-device"])
def test_a_selector_holding_code_is_printed_by_verify_never_run(project, target, extra, args):
    """The differential check's skip lines name the substitution by its selector, as written."""
    from iree_kernels.check import runtime
    if target == "cuda" and "cuda" in runtime.available_drivers(toolchains.iree_tool("iree-run-module")):
        pytest.skip("a CUDA device is here: the check would run")
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/k.mlir", SQUARE)
    project.write("kernels/demo.toml", MLP_ONLY.replace('"llvm-cpu"', f'"{target}"')
                  + f'\n[[substitutions]]\nmodel = "mlp"\ntarget = "{target}"\n'
                    f'export = "*{P}"\nfile = "kernels/k.mlir"\n{extra}')
    build = project.scons(f"IREE_TARGETS={target}", *args, expect_ok=False)
    assert f"verify: skipped export=*{P} of mlp/{target}: " in build.output, build.output
    assert "Traceback" not in build.output
    for folder in (project.root, project.root.parent):          # the payload writes to both
        assert not (folder / PWNED).exists(), "a string was run as code"


def test_a_relinked_kernel_whose_selector_holds_code_runs_nothing(project, tmp_path):
    """RELINK's files, values and lines are made from the substitution's key: its selector."""
    project.copy(REPO / "models/mlp.mlir", "models/mlp.mlir")
    project.write("kernels/k.mlir", SQUARE)
    # A character class holding the payload matches the export's last character.
    project.write("kernels/demo.toml", MLP_ONLY + '\n[[substitutions]]\nmodel = "mlp"\n'
                  f'target = "llvm-cpu"\nexport = "main_dispatch_1_reduction_4x16_f3[2{P}]"\n'
                  'file = "kernels/k.mlir"\nverify = false\n')
    build = project.scons("RELINK=yes")
    assert build.ran("EXPORTS") and build.ran("BINARY"), build.output
    assert build.ran("RELINK") == ["build/llvm-cpu/mlp.vmfb"]
    assert project.scons("RELINK=yes", "--question").returncode == 0
    for folder in (project.root, project.root.parent):          # the payload writes to both
        assert not (folder / PWNED).exists(), "a string was run as code"


@pytest.mark.parametrize("function", ["main", f'"{PAYLOAD}"'], ids=["glob", "names"])
def test_a_family_whose_glob_or_executables_hold_code_runs_nothing(project, tmp_path, function):
    """A family's glob reaches its report, dump's listing and progress lines; its instances'
    names reach headers, objects and the timings file, or decline where they cannot."""
    project.write("models/mlp.mlir", (REPO / "models/mlp.mlir").read_text()
                  .replace("func.func @main(", f"func.func @{function}("))
    project.copy(REPO / "kernels/families/gemm.c", "kernels/gemm.c")
    project.write("kernels/family.toml", MLP_ONLY + (
        '[[substitutions]]\nmodel = "mlp"\ntarget = "llvm-cpu"\n'
        f'match = "*matmul*[2{P}]"\nfile = "kernels/gemm.c"\nkeep = "faster"\n'
        'timings = "kernels/gemm.timings.json"\n'
        'workgroup_count = ["ceildiv(n, 64)", "ceildiv(m, 8)", "batch"]\n'))
    taken = function == "main"
    once = "IREE_BENCHMARKFLAGS=--benchmark_repetitions=1 --benchmark_min_time=1x"
    for args in (["timings", once], [], ["dump"], ["-c"]):
        result = project.scons(*args)
        assert "Traceback" not in result.output
        if args[:1] == ["timings"]:
            assert len(result.ran("CC")) == taken
        if args == [] and not taken:
            assert "took 0 of 1 executables it matched" in result.stdout
            assert "is not a plain symbol (letters, digits" in result.stdout
    if taken:
        assert "main_dispatch_0" in project.read("kernels/gemm.timings.json")
    assert not (tmp_path / PWNED).exists() and not (project.root / PWNED).exists()
