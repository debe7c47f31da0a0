"""iree_kernels.ir.translation: IREE's errors mapped to executables, and translating around them."""
from __future__ import annotations

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import ProgramExecutable
from iree_kernels.ir.translation import executable_lines, failed_executables, translate

PROGRAM = """\
module {
  hal.executable private @main_dispatch_0 {
    hal.executable.variant public @v target(#t) {
      op
    }
  }
  hal.executable public @"main$async_dispatch_1" {
    op
  }
  util.func public @main() {
    op
  }
}
"""


def test_executables_are_found_with_their_first_line():
    assert executable_lines(PROGRAM) == [(2, "main_dispatch_0"), (7, "main$async_dispatch_1")]
    assert executable_lines('hal.executable @"a\\"b" {\n}\n') == [(1, 'a"b')]
    assert executable_lines("util.func @main() {\n}\n") == []


def test_errors_are_mapped_to_the_executable_holding_their_line():
    output = ("p.mlir:4:7: error: failed to legalize\n"
              "p.mlir:5:1: error: a later error about the same executable\n"
              "p.mlir:8:5: error: 'op' unsupported\n")
    assert failed_executables(output, "p.mlir", PROGRAM) == {
        "main_dispatch_0": "failed to legalize", "main$async_dispatch_1": "'op' unsupported"}


def test_errors_of_the_host_program_or_another_file_are_no_executables():
    output = ("p.mlir:11:5: error: in the host function, after the last executable closed\n"
              "other.mlir:4:1: error: another file\n"
              "p.mlir:4:1: warning: not an error\n")
    assert failed_executables(output, "p.mlir", PROGRAM) == {}


def executables(*names: str) -> list[ProgramExecutable]:
    return [ProgramExecutable(n, "private", f"hal.executable private @{n} {{\n}}") for n in names]


class FakeCompile:
    """iree-compile that fails, with an error at its line, on every executable named in ``bad``."""

    def __init__(self, *bad: str, host_error: bool = False) -> None:
        self.bad, self.host_error, self.runs = bad, host_error, []

    def __call__(self, argv: list[str]) -> None:
        source, out = argv[0], argv[-1]
        text = open(source).read()
        self.runs.append([name for _, name in executable_lines(text)])
        if self.host_error:
            raise UserError("iree-compile: Unknown command line argument '--bad'")
        errors = [f"{source}:{line}:3: error: cannot compile {name}"
                  for line, name in executable_lines(text) if name in self.bad]
        if errors:
            raise UserError("iree-compile failed:\n" + "\n".join(errors))
        with open(out, "w") as f:
            f.write(f"translated {self.runs[-1]}\n")


def test_all_translate_in_one_run(tmp_path):
    compile_ = FakeCompile()
    done = translate(compile_, executables("a", "b"), tmp_path / "work")
    assert done.text == "translated ['a', 'b']\n" and done.failures == {} and done.log == ""
    assert compile_.runs == [["a", "b"]]
    sources = (tmp_path / "work/executables.sources.mlir").read_text()
    assert sources.startswith("hal.executable public @a {")          # made public to translate


def test_those_iree_fails_on_are_left_out_and_the_rest_compiled_again(tmp_path):
    compile_ = FakeCompile("b")
    done = translate(compile_, executables("a", "b", "c"), tmp_path)
    assert compile_.runs == [["a", "b", "c"], ["a", "c"]]
    assert done.text == "translated ['a', 'c']\n"
    assert done.failures == {"b": "cannot compile b"}
    assert "cannot compile b" in done.log


def test_when_all_fail_an_empty_module_is_left(tmp_path):
    done = translate(FakeCompile("a", "b"), executables("a", "b"), tmp_path)
    assert done.text == "module {\n}\n" and set(done.failures) == {"a", "b"}


def test_an_error_at_no_executable_is_raised_as_it_is(tmp_path):
    with pytest.raises(UserError, match="Unknown command line argument '--bad'"):
        translate(FakeCompile(host_error=True), executables("a"), tmp_path)
