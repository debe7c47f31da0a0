"""A failed module compile blames IREE's codegen only for executables IREE itself made."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from iree_kernels.core import toolchains
from iree_kernels.ir.program_text import SplicedProgram
from iree_kernels.ir.targets import TARGETS
from site_tools.iree_compile import explain_module_failure

KERNEL = REPO / "kernels/llvm-cpu/mlp_square_relu.mlir"


class _Node:
    def __init__(self, path):
        self.path = path

    def get_abspath(self):
        return str(self.path)

    def __str__(self):
        return str(self.path)


def _line_of(text: str, name: str) -> int:
    return text[:text.index(f"@{name} {{")].count("\n") + 2


@pytest.mark.skipif(not toolchains.iree_compile(), reason="needs iree-compile")
def test_an_error_in_a_replaced_executable_names_the_build_not_iree(tmp_path):
    front = subprocess.run([toolchains.iree_compile(), str(REPO / "models/mlp.mlir"),
                            *TARGETS["llvm-cpu"].compile_flags, "--compile-to=executable-sources",
                            "-o", "-"], capture_output=True, text=True, check=True,
                           timeout=300).stdout
    folder = tmp_path / "build/llvm-cpu/mlp"
    (folder / "module").mkdir(parents=True)
    (folder / "executables.mlir").write_text(front)
    spliced = SplicedProgram(front)
    spliced.replace("main_dispatch_1", KERNEL.read_text(), str(KERNEL))
    assembled = folder / "module/mlp.mlir"
    assembled.write_text(spliced.text() + "\n")
    target, source = [_Node(tmp_path / "build/llvm-cpu/mlp.vmfb")], [_Node(assembled)]

    def explained(name):
        line = _line_of(assembled.read_text(), name)
        return explain_module_failure(target, source, None,
                                      f"{assembled}:{line}:3: error: failed to distribute\n")

    replaced = explained("main_dispatch_1")
    assert replaced.startswith("iree-compile fails for 1 executable(s) of model 'mlp' on "
                               "llvm-cpu that this build replaced")
    assert "main_dispatch_1 (export" in replaced and "failed to distribute" in replaced
    own = explained("main_dispatch_0")
    assert own.startswith("IREE's llvm-cpu codegen fails for 1 executable(s) of model 'mlp': "
                          "main_dispatch_0 (export")
    assert (folder / "compile-errors.log").is_file()
