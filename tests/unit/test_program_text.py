"""The program edited as text gives the program the MLIR bindings give, without parsing its weights."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from iree_kernels.ir import executables
from iree_kernels.ir import fingerprints
from iree_kernels.core import toolchains
from iree_kernels.ir.program import Program
from iree_kernels.ir.program_text import (NotSplittable, SplicedProgram, executables_from_dumps,
                                       executables_only, open_program, resource_lines)
from iree_kernels.ir.targets import TARGETS
from test_program import RESOURCES_MODEL

KERNEL = REPO / "kernels/llvm-cpu/mlp_square_relu.mlir"
needs_iree = pytest.mark.skipif(not toolchains.iree_compile(), reason="needs iree-compile")


def front_end(model, target: str = "llvm-cpu") -> str:
    argv = [toolchains.iree_compile(), str(model), *TARGETS[target].compile_flags,
            "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True,
                          timeout=300).stdout


@needs_iree
@pytest.mark.parametrize("target", ["llvm-cpu", "vulkan"])
def test_splicing_a_replacement_prints_what_the_bindings_print(target):
    text = front_end(REPO / "models/mlp.mlir", target)
    spliced = SplicedProgram(text)
    with Program(text) as parsed:
        assert spliced.names() == parsed.names()
        assert spliced.executables() == parsed.executables()
        assert spliced.text() == parsed.text()
        if target == "llvm-cpu":
            parsed.replace("main_dispatch_1", KERNEL.read_text(), str(KERNEL))
            spliced.replace("main_dispatch_1", KERNEL.read_text(), str(KERNEL))
            assert spliced.executable_text("main_dispatch_1") == \
                parsed.executable_text("main_dispatch_1")
        assert spliced.text() == parsed.text()
    assert spliced.text() != text.rstrip("\n") or target == "vulkan"


@needs_iree
def test_the_executables_alone_read_as_the_program_does(tmp_path):
    text = front_end(REPO / "models/layers.mlir")
    alone = executables_only(text)
    assert "util.global" in text and "util.global" not in alone and "util.func" not in alone
    assert executables.read_executables(alone, "alone") == executables.read_executables(text, "p")
    assert fingerprints.fingerprints(alone, "alone") == fingerprints.fingerprints(text, "p")


@needs_iree
def test_the_executables_alone_keep_only_the_resources_they_use(tmp_path):
    model = tmp_path / "resources.mlir"
    model.write_text(RESOURCES_MODEL)
    alone = executables_only(front_end(model))
    assert "inside: \"0x0400" in alone and "outside" not in alone
    with Program(alone) as parsed:
        assert parsed.names() == ["main_dispatch_0"]


def test_text_it_does_not_read_is_left_to_the_bindings():
    aliased = "#map = affine_map<(d0) -> (d0)>\nmodule {\n}\n"
    with pytest.raises(NotSplittable):
        SplicedProgram(aliased)
    assert executables_only(aliased) == aliased
    unclosed = "module {\n  hal.executable private @x {\n    hal.executable.variant"
    with pytest.raises(NotSplittable):
        SplicedProgram(unclosed)


@needs_iree
def test_a_replacement_using_resources_goes_through_the_bindings(tmp_path):
    model = tmp_path / "resources.mlir"
    model.write_text(RESOURCES_MODEL)
    text = front_end(model)
    with Program(text) as parsed:
        kernel = parsed.executable_text("main_dispatch_0")
    assert "dense_resource<" in kernel
    assert isinstance(open_program(text, "p", (kernel,)), Program)
    with pytest.raises(NotSplittable):
        SplicedProgram(text).replace("main_dispatch_0", kernel, "k.mlir")


def dumped_sources(model, folder) -> dict[str, str]:
    """The dumps of a plain compile of ``model`` (file name -> text)."""
    subprocess.run([toolchains.iree_compile(), str(model), *TARGETS["llvm-cpu"].compile_flags,
                    f"--iree-hal-dump-executable-sources-to={folder}", "-o", str(folder) + ".vmfb"],
                   capture_output=True, check=True, timeout=300)
    return {p.name: p.read_text() for p in sorted(folder.iterdir())}


def without_module_line(text: str) -> str:
    return text.split("\n", 1)[1]


@needs_iree
def test_the_executables_alone_from_a_compile_s_dumps_are_the_front_end_s(tmp_path):
    model = REPO / "models/layers.mlir"
    made = executables_from_dumps(dumped_sources(model, tmp_path / "dumps"))
    assert made.startswith("module {\n")
    # 41 executables, dispatch_10 after dispatch_9 as in the program.
    assert without_module_line(made) == without_module_line(executables_only(front_end(model)))


@needs_iree
def test_the_executables_alone_from_dumps_take_the_resources_they_use_from_the_model(tmp_path):
    model = tmp_path / "resources.mlir"
    model.write_text(RESOURCES_MODEL)
    dumps = dumped_sources(model, tmp_path / "dumps")
    made = executables_from_dumps(dumps, lambda keys: resource_lines(RESOURCES_MODEL, keys))
    assert without_module_line(made) == without_module_line(executables_only(front_end(model)))
    assert "inside: \"0x0400" in made and "outside" not in made
    with pytest.raises(NotSplittable):
        executables_from_dumps(dumps, lambda keys: resource_lines("module {\n}\n", keys))
    with pytest.raises(NotSplittable):
        resource_lines(RESOURCES_MODEL.replace("inside:", "elsewhere:"), {"inside"})


def test_dumps_it_does_not_read_are_not_split():
    executable = "hal.executable public @x {\n}\n"
    assert executables_from_dumps({"module_x.mlir": executable}) == \
        "module {\n  hal.executable private @x {\n  }\n}\n"
    for dumps in ({"a.mlir": "#map = affine_map<(d0) -> (d0)>\n" + executable},
                  {"a.mlir": executable, "b.mlir": executable},
                  {"a.mlir": executable + "\n{-#\n  dialect_resources: {\n  }\n#-}\n"}):
        with pytest.raises(NotSplittable):
            executables_from_dumps(dumps)
