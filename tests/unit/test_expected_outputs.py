"""iree_kernels.check.expected_outputs: expected-outputs files read, and cases run against a stand-in iree-run-module.

The stand-in writes what its --function names (tests/unit/test_expected_outputs.py's
FAKE_RUN_MODULE), so the comparison and every failure are tested without IREE.
Data paths and the time limit are tested in test_hardening.py.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

from iree_kernels.check import expected_outputs
from iree_kernels.core.errors import UserError

FAKE_RUN_MODULE = f"""#!{sys.executable}
import os, signal, sys
import numpy as np
args = dict(a[2:].split("=", 1) for a in sys.argv[1:] if "=" in a)
outputs = [a.split("=", 1)[1][1:] for a in sys.argv[1:] if a.startswith("--output=")]
with open("argv.txt", "w") as f:
    f.write("\\n".join(sys.argv[1:]))
function = args["function"]
if function == "fail":
    print("INVALID_ARGUMENT; no function", file=sys.stderr)
    sys.exit(1)
if function == "crash":
    os.kill(os.getpid(), signal.SIGSEGV)
values = {{"main": [np.full(3, 4.0, np.float32)],
          "two": [np.full(3, 4.0, np.float32), np.arange(2, dtype=np.int32)],
          "near": [np.array([1.0, 2.0, 3.0001], np.float32)]}}[function]
with open(outputs[0], "wb") as f:
    for value in values:
        np.save(f, value)
"""


@pytest.fixture
def run_module(tmp_path):
    path = tmp_path / "iree-run-module"
    path.write_text(FAKE_RUN_MODULE)
    path.chmod(0o755)
    return str(path)


def expected(tmp_path, text: str) -> str:
    path = tmp_path / "m.expected.toml"
    path.write_text(text)
    return str(path)


CASE = '[[case]]\nfunction = "main"\ninputs = ["3xf32=1", "@x.npy"]\noutputs = ["3xf32=4"]\n'


def test_cases_are_read_with_their_fields(tmp_path):
    path = expected(tmp_path, CASE + '[[case]]\nfunction = "two"\noutputs = ["3xf32=4", "2xi32=0,1"]\n'
                    'targets = ["vulkan"]\natol = 0.5\nulp = 2\n')
    first, second = expected_outputs.load_cases(path)
    assert first == expected_outputs.Case("main", ("3xf32=1", "@x.npy"), ("3xf32=4",), None, None, None,
                                "[[case]] #1")
    assert (second.targets, second.atol, second.rtol, second.ulp, second.entry) == \
        (("vulkan",), 0.5, None, 2, "[[case]] #2")
    assert second.inputs == ()


def test_a_target_keeps_its_cases_and_those_for_every_target(tmp_path):
    path = expected(tmp_path, CASE + '[[case]]\nfunction = "v"\noutputs = ["1xf32=1"]\n'
                    'targets = ["vulkan"]\n')
    assert [c.function for c in expected_outputs.load_cases(path, "vulkan")] == ["main", "v"]
    assert [c.function for c in expected_outputs.load_cases(path, "llvm-cpu")] == ["main"]


@pytest.mark.parametrize("text, message", [
    ("[[case]\n", "m.expected.toml:1: not valid TOML"),      # the line tomllib names
    ('cases = 1\n', "m.expected.toml: unknown key 'cases'; an expected-outputs file holds [[case]]"),
    ('[[case]]\nfunction = "main"\noutputs = ["1xf32=1"]\ninput = ["1xf32=1"]\n',
     "[[case]] #1: unknown field 'input' (did you mean 'inputs'?)"),
    ('[[case]]\noutputs = ["1xf32=1"]\n', "[[case]] #1: field 'function': missing required field"),
    ('[[case]]\nfunction = "main"\n', "[[case]] #1: field 'outputs': missing required field"),
    ('[[case]]\nfunction = "main"\noutputs = "1xf32=1"\n',
     "field 'outputs': must be a list of strings"),
    ('[[case]]\nfunction = "main"\noutputs = ["1xf32=1"]\ninputs = [1]\n',
     "field 'inputs': must be a list of strings"),
    ('[[case]]\nfunction = 3\noutputs = ["1xf32=1"]\n', "field 'function': must be a string"),
    ('[[case]]\nfunction = "ma\\u0007in"\noutputs = ["1xf32=1"]\n',
     "field 'function': 'ma\\x07in' contains the control character '\\x07'"),
    ('[[case]]\nfunction = "main"\noutputs = ["1xf32=1"]\natol = -1\n', "field 'atol': "),
])
def test_a_malformed_file_says_where(tmp_path, text, message):
    with pytest.raises(UserError) as refused:
        expected_outputs.load_cases(expected(tmp_path, text))
    assert message in str(refused.value)


def test_an_unreadable_file_is_a_user_error(tmp_path):
    with pytest.raises(UserError, match="cannot read the expected-outputs file"):
        expected_outputs.load_cases(str(tmp_path / "missing.expected.toml"))
    (tmp_path / "bad.expected.toml").write_bytes(b"\xff\xfe")
    with pytest.raises(UserError, match="bad.expected.toml: not UTF-8 text"):
        expected_outputs.load_cases(str(tmp_path / "bad.expected.toml"))


def test_a_case_runs_as_iree_run_module_arguments():
    case = expected_outputs.Case("f", ("2xf32=1", "@in.npy"), ("2xf32=1", "1xi32=0"), None, None, None, "e")
    assert case.argv("run", "m.vmfb", "local-task", "out.npy") == [
        "run", "--module=m.vmfb", "--device=local-task", "--function=f", "--input=2xf32=1",
        "--input=@in.npy", "--output=@out.npy", "--output=+out.npy"]


def test_input_shapes_read_values_and_npy_headers(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 5), np.float32))
    case = expected_outputs.load_cases(expected(tmp_path, CASE))[0]
    assert expected_outputs.input_shapes(case, tmp_path) == [(3,), (2, 5)]
    with pytest.raises(UserError, match="\\[\\[case\\]\\] #1: input '@x.npy'"):
        expected_outputs.input_shapes(case, tmp_path / "elsewhere")


def test_case_shapes_name_the_case_and_file(tmp_path):
    path = expected(tmp_path, '[[case]]\nfunction = "main"\ninputs = ["4x2xf32=0"]\noutputs = ["1xf32=1"]\n')
    assert expected_outputs.case_shapes(path, "llvm-cpu") == [
        ("main", [(4, 2)], f"the input shapes of [[case]] #1 in {path}")]
    assert expected_outputs.case_shapes(None, "llvm-cpu") == []


def test_referenced_files_are_the_at_paths_once():
    cases = [expected_outputs.Case("f", ("@b.npy", "1xf32=1"), ("@a.npy",), None, None, None, "e"),
             expected_outputs.Case("g", ("@b.npy",), ("1xf32=1",), None, None, None, "e")]
    assert expected_outputs.referenced_files(cases) == ["a.npy", "b.npy"]


def test_a_matching_case_says_what_matched(tmp_path, run_module):
    np.save(tmp_path / "x.npy", np.zeros(3, np.float32))
    case = expected_outputs.load_cases(expected(tmp_path, CASE))[0]
    said = expected_outputs.run_case(case, run_module, "m.vmfb", "local-sync", "m.expected.toml",
                           cwd=str(tmp_path))
    assert said.startswith("m.vmfb: @main gave the 1 expected output(s) (")
    argv = (tmp_path / "argv.txt").read_text().splitlines()
    assert argv[:5] == ["--module=m.vmfb", "--device=local-sync", "--function=main",
                        "--input=3xf32=1", "--input=@x.npy"]


def test_several_outputs_are_compared_each(tmp_path, run_module):
    case = expected_outputs.Case("two", (), ("3xf32=4", "2xi32=0,1"), None, None, None, "[[case]] #1")
    assert "gave the 2 expected output(s)" in expected_outputs.run_case(
        case, run_module, "m.vmfb", "local-sync", "e.toml", cwd=str(tmp_path))
    wrong = expected_outputs.Case("two", (), ("3xf32=4", "2xi32=0,2"), None, None, None, "[[case]] #1")
    with pytest.raises(UserError, match="e.toml: \\[\\[case\\]\\] #1: m.vmfb on device 'local-sync' "
                                        "does not produce the expected outputs of @two: result 1: "):
        expected_outputs.run_case(wrong, run_module, "m.vmfb", "local-sync", "e.toml", cwd=str(tmp_path))


def test_a_tolerance_lets_a_near_result_pass(tmp_path, run_module):
    exact = expected_outputs.Case("near", (), ("3xf32=1,2,3",), None, 0, 0, "[[case]] #1")
    with pytest.raises(UserError, match=r"result 0: element \[2\] is 3.00009\d+, expected 3.0 "
                                        r".*1 of 3 elements differ \(exact\)"):
        expected_outputs.run_case(exact, run_module, "m.vmfb", "d", "e.toml", cwd=str(tmp_path))
    default = expected_outputs.Case("near", (), ("3xf32=1,2,3",), None, None, None, "[[case]] #1")
    assert expected_outputs.run_case(default, run_module, "m.vmfb", "d", "e.toml", cwd=str(tmp_path)) == \
        "m.vmfb: @near gave the 1 expected output(s) (the default tolerance)\n"


@pytest.mark.parametrize("function, message", [
    ("fail", "m.vmfb on device 'd' does not produce the expected outputs of @fail:\n"
             "INVALID_ARGUMENT; no function"),
    ("crash", "m.vmfb on device 'd': iree-run-module"),
])
def test_a_failing_or_crashing_run_is_a_user_error(tmp_path, run_module, function, message):
    case = expected_outputs.Case(function, (), ("1xf32=1",), None, None, None, "[[case]] #1")
    with pytest.raises(UserError) as failed:
        expected_outputs.run_case(case, run_module, "m.vmfb", "d", "e.toml", cwd=str(tmp_path))
    assert message in str(failed.value)
    if function == "crash":
        assert "SIGSEGV" in str(failed.value) and "running @crash" in str(failed.value)


def test_a_missing_program_is_a_user_error(tmp_path):
    case = expected_outputs.Case("main", (), ("1xf32=1",), None, None, None, "[[case]] #1")
    with pytest.raises(UserError, match="e.toml: cannot run .*/nowhere: No such file"):
        expected_outputs.run_case(case, str(tmp_path / "nowhere"), "m.vmfb", "d", "e.toml")


def test_an_unreadable_expected_value_names_the_output(tmp_path, run_module):
    case = expected_outputs.Case("main", (), ("3xq9=4",), None, None, None, "[[case]] #1")
    with pytest.raises(UserError, match="output 1: '3xq9=4' is not a value this check reads"):
        expected_outputs.run_case(case, run_module, "m.vmfb", "d", "e.toml", cwd=str(tmp_path))


def test_main_reports_matched_and_failed(tmp_path, run_module, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(expected_outputs.toolchains, "iree_tool", lambda name: run_module)
    np.save(tmp_path / "x.npy", np.zeros(3, np.float32))
    path = expected(tmp_path, CASE)
    assert expected_outputs.main(["m.vmfb", path, "llvm-cpu", "local-sync"]) == 0
    assert capsys.readouterr().out == f"m.vmfb: 1 case(s) of {path} matched on local-sync\n"
    path = expected(tmp_path, CASE.replace('"3xf32=4"', '"3xf32=5"'))
    assert expected_outputs.main(["m.vmfb", path, "llvm-cpu", "local-sync"]) == 1
    assert capsys.readouterr().out.startswith(f"FAILED: {path}: [[case]] #1: m.vmfb on device")
