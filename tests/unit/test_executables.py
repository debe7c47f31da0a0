"""Reading executables from a real executable-sources dump, and matching substitutions to them."""
from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import parse_layout, read_executables
from iree_kernels.project.records import Origin, Substitution
from iree_kernels.module.substitution import flag_file, plan_substitutions
from iree_kernels.ir.targets import TARGETS


def dump(target: str) -> str:
    argv = [toolchains.iree_compile(), str(REPO / "models/mlp.mlir"),
            *TARGETS[target].compile_flags, "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def llvm_cpu():
    return read_executables(dump("llvm-cpu"))


def test_reads_names_exports_and_layouts(llvm_cpu):
    assert sorted(llvm_cpu) == ["main_dispatch_0", "main_dispatch_1"]
    reduction = llvm_cpu["main_dispatch_1"]
    assert reduction.backend == "llvm-cpu"
    assert reduction.export.name == "main_dispatch_1_reduction_4x16_f32"
    assert [b.read_only for b in reduction.export.layout.bindings] == [True, True, False]
    assert reduction.export.layout.constants == 0


def test_backend_of_each_target():
    assert {e.backend for e in read_executables(dump("vulkan")).values()} == {"vulkan-spirv"}
    assert {e.backend for e in read_executables(dump("cuda")).values()} == {"cuda"}


def test_layout_with_push_constants():
    layout = parse_layout('#hal.pipeline.layout<constants = 4, bindings = [#hal.pipeline.binding'
                          '<storage_buffer, "ReadOnly|Indirect">, #hal.pipeline.binding<storage_buffer>]>')
    assert layout.constants == 4
    assert [(b.index, b.read_only) for b in layout.bindings] == [(0, True), (1, False)]
    assert layout.describe() == "2 bindings [0:ro, 1:rw], 4 push constants"


def test_unparsable_dump_names_the_file():
    with pytest.raises(UserError, match=r"^build/x.mlir: cannot parse executable sources"):
        read_executables("hal.executable @x {", "build/x.mlir")


def substitution(executable: str, file: str = "kernels/k.mlir") -> Substitution:
    return Substitution("mlp", "llvm-cpu", executable, file, "source",
                        Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {"executable": 6}))


def test_plan_and_flag_file(llvm_cpu):
    planned = plan_substitutions([substitution("main_dispatch_1")], llvm_cpu)
    assert planned[0].as_record()["export"] == "main_dispatch_1_reduction_4x16_f32"
    assert flag_file(planned) == \
        "--iree-hal-substitute-executable-source=main_dispatch_1=kernels/k.mlir\n"


def test_plan_uses_built_paths(llvm_cpu):
    planned = plan_substitutions([substitution("main_dispatch_1", "kernels/k.mlir")], llvm_cpu,
                   {"main_dispatch_1": {"kernel": "build/kernels/k.mlir"}})
    assert planned[0].path == "build/kernels/k.mlir"


def test_unknown_executable_lists_the_known_ones(llvm_cpu):
    with pytest.raises(UserError) as e:
        plan_substitutions([substitution("main_dispatch_2")], llvm_cpu)
    assert str(e.value) == (
        "kernels/demo.toml:6: [[substitutions]] #1: field 'executable': model 'mlp' has no "
        "executable 'main_dispatch_2' for target 'llvm-cpu' (did you mean 'main_dispatch_1'?); "
        "its executables: main_dispatch_0, main_dispatch_1")


def test_the_bindings_warm_up_aside_on_an_executable_this_iree_parses():
    code = ("import sys, threading; sys.path.insert(0, 'site_scons')\n"
            "from iree_kernels.ir import executables\n"
            "executables.import_bindings_aside()\n"
            "[t.join() for t in threading.enumerate() if t.name.startswith('warm-up')]\n"
            "print('iree.compiler.ir' in sys.modules)\n"
            "found = executables.read_executables(executables._WARM_UP.read_text())\n"
            "print(sorted(found), [e.name for e in found['warm_up'].exports])")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "True", "['warm_up'] ['warm_up_matmul_8x2048x2048_f32']"]


def test_a_process_exiting_right_after_the_warm_up_started_waits_for_it_and_exits_0():
    # atexit handlers run after the interpreter waits for its non-daemon threads: the handler
    # sees the bindings imported only where the exit waited for the warm-up. A daemon thread
    # would still be importing there, or parsing MLIR in C++ while the process ends (SIGABRT).
    code = ("import atexit, sys; sys.path.insert(0, 'site_scons')\n"
            "from iree_kernels.ir import executables\n"
            "atexit.register(lambda: print('iree.compiler.ir' in sys.modules))\n"
            "executables.import_bindings_aside()\n"
            "sys.exit(0)")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["True"], result.stderr
