"""The executable-sources program, edited with the MLIR bindings as iree-compile's own substitution does."""
from __future__ import annotations

import subprocess
import textwrap

import pytest

from conftest import DATA, REPO
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import EmbeddedObject, Program
from iree_kernels.ir.targets import TARGETS

KERNEL = REPO / "kernels/llvm-cpu/mlp_square_relu.mlir"
needs_iree = pytest.mark.skipif(not toolchains.iree_compile(), reason="needs iree-compile")


def front_end(*flags: str) -> str:
    argv = [toolchains.iree_compile(), str(REPO / "models/mlp.mlir"),
            *TARGETS["llvm-cpu"].compile_flags, "--compile-to=executable-sources",
            "--mlir-print-local-scope", *flags, "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.rstrip("\n")


@needs_iree
def test_a_program_prints_as_iree_compile_printed_it():
    text = front_end()
    with Program(text) as program:
        assert program.names() == ["main_dispatch_0", "main_dispatch_1"]
        assert program.text() == text
        for e in program.executables():
            assert textwrap.indent(e.text, "  ") in text and e.visibility == "private"


@needs_iree
def test_replacing_an_executable_gives_what_iree_compiles_own_substitution_gives():
    with Program(front_end()) as program:
        program.replace("main_dispatch_1", KERNEL.read_text(), str(KERNEL))
        ours = program.text()
    theirs = front_end(f"--iree-hal-substitute-executable-source=main_dispatch_1={KERNEL}")
    assert ours == theirs
    assert ours != front_end()


@needs_iree
def test_a_replacement_without_the_executable_names_its_file_and_what_it_holds():
    with Program(front_end()) as program:
        with pytest.raises(UserError) as e:
            program.replace("main_dispatch_0", KERNEL.read_text(), "kernels/k.mlir")
    assert str(e.value).startswith("kernels/k.mlir: holds no hal.executable @main_dispatch_0")
    assert "main_dispatch_1" in str(e.value)


def test_unreadable_mlir_is_one_error_naming_the_file():
    with pytest.raises(UserError) as e:
        Program("hal.executable @x {", "build/x.mlir")
    assert str(e.value).startswith("build/x.mlir:1:18: expected operation name")
    assert "\n" not in str(e.value)


EXECUTABLE = """hal.executable private @ex {
  hal.executable.variant public @v target(<"cuda", "cuda-nvptx-fb">) {
    hal.executable.export public @ex_f ordinal(0) layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>) count(%arg0: !hal.device) -> (index, index, index) {
      %c1 = arith.constant 1 : index
      hal.return %c1, %c1, %c1 : index, index, index
    } <workgroup_size = [64 : index, 1 : index, 1 : index]>
    builtin.module {
      func.func @ex_f() {
        return
      }
    }
  }
}"""


def linking_object(executable: str, linked: EmbeddedObject) -> str:
    """``executable`` (one hal.executable) put back in place of itself, its variant linking ``linked``."""
    with Program(executable) as program:
        name = program.names()[0]
        program.replace(name, executable, "<test>", linked=linked)
        return program.executable_text(name)


def test_cutting_the_code_keeps_the_export_whole():
    with Program(EXECUTABLE) as program:
        stripped = program.without_code("ex")
    assert "builtin.module" not in stripped and "func.func" not in stripped
    assert "<workgroup_size = [64 : index, 1 : index, 1 : index]>" in stripped


def test_only_an_executable_linking_objects_without_code_is_external():
    with Program(EXECUTABLE) as program:
        assert not program.is_external("ex")
        linked = linking_object(program.without_code("ex"), EmbeddedObject("k.ptx", b"\x01"))
    with Program(linked) as program:
        assert program.is_external("ex")
    with Program(linking_object(EXECUTABLE, EmbeddedObject("k.o", b"\x01"))) as program:
        assert not program.is_external("ex")             # objects, and code to translate


def test_an_object_is_linked_embedded_under_its_name():
    with Program(EXECUTABLE) as program:
        linked = linking_object(program.without_code("ex"), EmbeddedObject("k.ptx", b"\x01\xab"))
    assert ('objects([#hal.executable.object<{path = "k.ptx", data = dense<[1, -85]> : '
            'vector<2xi8>}>])') in linked
    with Program(linked) as again:
        assert again.names() == ["ex"]


def _saxpy_program() -> str:
    argv = [toolchains.iree_compile(), str(REPO / "models/saxpy.mlir"),
            *TARGETS["llvm-cpu"].compile_flags, "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


@needs_iree
def test_specializing_to_input_shapes_makes_the_dispatch_site_static():
    text = _saxpy_program()
    with Program(text) as program:
        executable = program.executable_text("main_dispatch_0")
        program.specialize("main", [(5000,), (5000,)])
        specialized = program.text()
        assert program.executable_text("main_dispatch_0") == executable
    assert "hal.buffer_view.dim" in text and "hal.buffer_view.dim" not in specialized
    site = next(line for line in specialized.splitlines() if "stream.cmd.dispatch" in line)
    assert "[%c5000, %c5000](%c5000_i32, %c0_i32, %c5000_i32, %c0_i32" in site


@needs_iree
def test_specializing_names_what_the_shapes_given_lack():
    with Program(_saxpy_program(), "saxpy.mlir") as program:
        with pytest.raises(UserError, match=r"saxpy.mlir: @main reads dimension 0 of input 1; "
                                            r"the inputs given have shapes \[\(5000,\)\]"):
            program.specialize("main", [(5000,)])
        with pytest.raises(UserError, match="has no function @nope"):
            program.specialize("nope", [])


RESOURCES_MODEL = (DATA / "models/resources.mlir").read_text()


def _resources_program(tmp_path) -> str:
    """A torch export in miniature: one weight inlined into an executable, one kept by the host."""
    model = tmp_path / "resources.mlir"
    model.write_text(RESOURCES_MODEL)
    argv = [toolchains.iree_compile(), str(model), *TARGETS["llvm-cpu"].compile_flags,
            "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def _run(vmfb) -> str:
    argv = [toolchains.iree_tool("iree-run-module"), f"--module={vmfb}", "--device=local-sync",
            "--input=4xf32=1,2,3,4"]
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=60).stdout


@needs_iree
def test_a_program_keeps_the_resources_inside_and_outside_its_executables(tmp_path):
    text = _resources_program(tmp_path)
    assert "dense_resource<inside>" in text and "dense_resource<outside>" in text
    with Program(text) as program:
        program.replace("main_dispatch_0", program.executable_text("main_dispatch_0"), "same")
        printed = program.text()
    assert '"0x040000000000803F000000400000404000008040"' in printed
    assert '"0x0400000000002041000030410000404100005041"' in printed
    assembled = tmp_path / "assembled.mlir"
    assembled.write_text(printed + "\n")
    vmfb = tmp_path / "assembled.vmfb"
    subprocess.run([toolchains.iree_compile(), str(assembled), *TARGETS["llvm-cpu"].compile_flags,
                    "--compile-from=executable-sources", "-o", str(vmfb)],
                   capture_output=True, check=True, timeout=120)
    assert "4xf32=2 4 6 8" in _run(vmfb) and "4xf32=10 11 12 13" in _run(vmfb)


@needs_iree
def test_an_executable_on_its_own_carries_only_the_resources_it_uses(tmp_path):
    with Program(_resources_program(tmp_path)) as program:
        (executable,) = program.executables()
        assert program.resources(["main_dispatch_0"]) == executable.resources
    assert "inside:" in executable.resources and "outside" not in executable.resources
    with Program(executable.standalone()) as alone:
        assert alone.names() == ["main_dispatch_0"]
        assert "inside:" in alone.text()
