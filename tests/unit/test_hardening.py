"""The library's defences, alone: division bounds, regular files, time limits, paths in data files."""
from __future__ import annotations

import os
import sys

import pytest

from iree_kernels.check import expected_outputs
from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError, shown
from iree_kernels.core.files import read_text
from iree_kernels.project.manifest import load_project
from iree_kernels.ir.workgroups import ExpressionError, count_region


@pytest.mark.parametrize("expression, refused", [
    ("w0 // 0", "divides by '0', which is zero"),
    ("ceildiv(w0, 0)", "which is zero"),
    ("w0 // w1", "divides by 'w1', which can be zero"),
    ("ceildiv(w0, w1 - 1)", "divides by 'w1 - 1', which can be zero"),
    ("w0 // min(w1, 8)", "which can be zero"),
    ("w0 // max(w1, 0)", "which can be zero"),
    ("w0 // ceildiv(w1, 2)", "which can be zero"),
    ("w0 // (4 // 8)", "which is zero"),
    ("w0 // (w1 * 0 + 0)", "which can be zero"),
])
def test_a_divisor_that_can_be_zero_is_refused(expression, refused):
    with pytest.raises(ExpressionError, match=refused.replace("(", r"\(").replace(")", r"\)")):
        count_region([expression], None)


@pytest.mark.parametrize("expression", ["ceildiv(w0, 256)", "w0 // max(w1, 1)", "w0 // (2 * w1 + 1)",
                                        "ceildiv(w0, ceildiv(w1 + 1, 2))", "w0 // min(w1 + 1, 8)",
                                        "w0 // (4 // 2)"])
def test_a_divisor_that_cannot_be_zero_is_taken(expression):
    assert count_region([expression], None).results


def test_only_regular_files_are_read(tmp_path):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbfa = 1\n")
    (tmp_path / "big").write_bytes(b"x" * 2048)
    with pytest.raises(ValueError, match="is a FIFO"):
        read_text(tmp_path / "fifo")            # returns at once: a FIFO is never opened
    with pytest.raises(ValueError, match="is a folder"):
        read_text(tmp_path / "folder")
    with pytest.raises(ValueError, match="is a character device"):
        read_text("/dev/zero")
    with pytest.raises(FileNotFoundError):
        read_text(tmp_path / "none")
    with pytest.raises(ValueError, match="larger than"):
        read_text(tmp_path / "big", limit=1024)
    assert read_text(tmp_path / "bom") == "a = 1\n"


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_a_tool_over_its_time_limit_is_stopped():
    with pytest.raises(UserError, match=r"did not finish within 0.5 s and was stopped; a tool that "
                                        r"takes longer needs KERNEL_COMPILE_TIMEOUT=SECONDS"):
        toolchains.run(python("import time; time.sleep(30)"),
                       timeouts=toolchains.Timeouts.from_values({"KERNEL_COMPILE_TIMEOUT": 0.5}))


def test_the_time_limit_is_the_one_of_the_tools_kind(tmp_path):
    compiler = tmp_path / "iree-compile"
    compiler.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    compiler.chmod(0o755)
    limits = toolchains.Timeouts.from_values({"IREE_COMPILE_TIMEOUT": "0.5"})
    with pytest.raises(UserError, match="iree-compile did not finish within 0.5 s .* "
                                        "IREE_COMPILE_TIMEOUT"):
        toolchains.run([str(compiler)], timeouts=limits)


def test_the_time_limits_are_the_settings_defaults_where_not_given():
    limits = toolchains.Timeouts.from_values({"RUN_TIMEOUT": "0"})
    assert limits.of("RUN_TIMEOUT") is None             # 0: no limit
    assert limits.for_program("/x/iree-compile") == float(settings.default("IREE_COMPILE_TIMEOUT"))
    assert toolchains.default_timeouts().of("VERSION_TIMEOUT") == \
        float(settings.default("VERSION_TIMEOUT"))
    with pytest.raises(UserError, match="RUN_TIMEOUT=soon: expected a number of seconds"):
        toolchains.Timeouts.from_values({"RUN_TIMEOUT": "soon"})


@pytest.mark.parametrize("value", ["inf", "1e300", "nan", "-1"])
def test_a_time_limit_is_a_finite_number_of_seconds_up_to_30_days(value):
    # inf was an OverflowError stack where a limit became an integer
    with pytest.raises(UserError, match=f"IREE_COMPILE_TIMEOUT={value}: expected a number of "
                                        r"seconds up to 2592000 \(30 days; 0: no limit\)"):
        toolchains.Timeouts.from_values({"IREE_COMPILE_TIMEOUT": value})


def test_a_tool_printing_an_error_fails_whatever_its_status():
    with pytest.raises(UserError, match="failed to check"):
        toolchains.run(python("print('x.mlir:1:1: error: bad')"), doing="check")
    assert toolchains.run(python("print('x.mlir:1:1: warning: the error: is fine here')")) != ""


def test_a_crash_is_named_with_the_substituted_executables(tmp_path):
    flags = tmp_path / "substitutions.flags"
    flags.write_text('"--iree-hal-substitute-executable-source=main_dispatch_0=kernels/k.mlir"\n')
    with pytest.raises(UserError, match=r"crashed \(SIGSEGV\); it was compiling with the "
                                        r"substituted executables main_dispatch_0 \(kernels/k.mlir\)"):
        toolchains.run(python("import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
                       + [f"@{flags}"])


def test_a_version_that_hangs_is_an_error(tmp_path):
    program = tmp_path / "slow"
    program.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    program.chmod(0o755)
    limits = toolchains.Timeouts.from_values({"VERSION_TIMEOUT": "0.5"})
    with pytest.raises(UserError, match="--version did not answer within 0.5 s"):
        toolchains.version(str(program), timeouts=limits)
    assert toolchains.version(str(tmp_path / "missing")) == ""


def test_a_program_path_holding_dollars_is_named_by_a_word_without_them():
    path = "/ci/$(touch x)${y}/bin/iree-compile"
    word = toolchains.command_word(path)
    assert "$" not in word and word.startswith("iree-compile")
    assert toolchains.real_program(word) == path
    assert toolchains.command_word("/usr/bin/clang") == "/usr/bin/clang"
    assert toolchains.command_word("/other/$x/iree-compile") != word      # two paths, two words


def test_a_check_over_its_time_limit_names_the_case(tmp_path):
    run_module = tmp_path / "iree-run-module"
    run_module.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(30)\n")
    run_module.chmod(0o755)
    limits = toolchains.Timeouts.from_values({"RUN_TIMEOUT": "0.5"})
    case = expected_outputs.Case("main", (), ("1xf32=1",), None, None, None, "[[case]] #1")
    with pytest.raises(UserError, match=r"models/m.expected.toml: \[\[case\]\] #1: m.vmfb on "
                                        r"device 'local-sync': iree-run-module did not finish "
                                        r"within 0.5 s .*RUN_TIMEOUT"):
        expected_outputs.run_case(case, str(run_module), "m.vmfb", "local-sync",
                                  "models/m.expected.toml", timeouts=limits)


@pytest.mark.parametrize("value, refused", [
    ("@../x.npy", "'../x.npy' is outside the repository"),
    ("@/etc/passwd", "'/etc/passwd' is absolute"),
    ("@${__import__('os').getpid()}", "contains '$'"),
    ("@build/x.npy", "'build/x.npy' is inside the build folder"),
    ("@missing.npy", "file not found: missing.npy"),
    ("@fifo", "'fifo' is a FIFO"),
])
def test_expected_data_paths_follow_the_repo_path_rule(tmp_path, value, refused):
    os.mkfifo(tmp_path / "fifo")
    expected = tmp_path / "m.expected.toml"
    expected.write_text(f'[[case]]\nfunction = "main"\ninputs = ["{value}"]\noutputs = ["1xf32=1"]\n')
    with pytest.raises(UserError, match=f"field 'inputs': '{value[:12]}".replace("$", r"\$")
                       .replace("(", r"\(")) as e:
        expected_outputs.load_cases(str(expected), root=tmp_path)
    assert refused in str(e.value)
    assert expected_outputs.load_cases(str(expected))         # without a repo: nothing to check against


def test_expected_targets_must_be_known(tmp_path):
    expected = tmp_path / "m.expected.toml"
    expected.write_text('[[case]]\nfunction = "main"\noutputs = ["1xf32=1"]\ntargets = ["vulkn"]\n')
    with pytest.raises(UserError, match="unknown target 'vulkn' \\(did you mean 'vulkan'\\?\\)"):
        expected_outputs.load_cases(str(expected))


@pytest.fixture
def repo(tmp_path):
    for name in ("models/mlp.mlir", "kernels/k.mlir", "build/k.mlir"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("module {}\n")
    return tmp_path


def refusal(repo, text: str, build_dir: str = "build") -> str:
    (repo / "kernels/demo.toml").write_text(text)
    with pytest.raises(UserError) as e:
        load_project(repo, [repo / "kernels/demo.toml"], build_dir)
    assert "\n" not in str(e.value)             # one line, whatever the input held
    return str(e.value)


MODEL = '[models.{0}]\nsource = "models/mlp.mlir"\ntargets = ["llvm-cpu"]\n'
SUB = '[[substitutions]]\nmodel = "mlp"\ntarget = "llvm-cpu"\nexecutable = "{0}"\nfile = "{1}"\n'


def test_models_whose_outputs_collide_are_refused_naming_both(repo):
    assert refusal(repo, MODEL.format("x") + MODEL.format('"x.vmfb"')) == (
        "kernels/demo.toml:1: models.x: model 'x' and model 'x.vmfb' (kernels/demo.toml:4) would "
        "both write build/llvm-cpu/x.vmfb: a file for model 'x', a folder for model 'x.vmfb'; "
        "rename one")
    assert "would both write out/llvm-cpu/x.check" in refusal(
        repo, MODEL.format("x") + MODEL.format('"x.check"'), "out")


def test_sources_in_the_build_folder_are_refused(repo):
    assert "'build/k.mlir' is inside the build folder (build/)" in refusal(
        repo, MODEL.format("mlp") + SUB.format("main_dispatch_0", "build/k.mlir"))
    (repo / "out").mkdir()
    (repo / "out/k.mlir").write_text("module {}\n")
    assert "'out/k.mlir' is inside the build folder (out/)" in refusal(
        repo, MODEL.format("mlp") + SUB.format("main_dispatch_0", "out/k.mlir"), "out/")


@pytest.mark.parametrize("text, refused", [
    (MODEL.format('"mlp\\n"'), "models.mlp\\n: model names may use"),
    (MODEL.format("mlp") + SUB.format("main\\u001b[2J", "kernels/k.mlir"),
     "field 'executable': 'main\\x1b[2J' contains the control character '\\x1b'"),
    (MODEL.format("mlp") + SUB.format("main_dispatch_0", "kernels/k.mlir\\n"),
     "path 'kernels/k.mlir\\n' contains '\\n'"),
    (MODEL.format("mlp") + 'options = { llvm-cpu = ["-O3\\r"] }\n',
     "flag '-O3\\r' contains the control character '\\r'"),
])
def test_control_characters_are_refused_and_shown_escaped(repo, text, refused):
    assert refused in refusal(repo, text)


def test_object_paths_in_mlir_kernels_stay_in_the_repo(repo):
    (repo / "kernels/k.mlir").write_text('module {}\n#hal.executable.object<{path = "../x.o"}>\n')
    assert ("field 'file': kernels/k.mlir:2: the #hal.executable.object path: '../x.o' is outside "
            "the repository") in refusal(repo, MODEL.format("mlp") + SUB.format("e", "kernels/k.mlir"))


def test_a_manifest_outside_the_repo_is_refused(repo, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere") / "m.toml"
    elsewhere.write_text(MODEL.format("mlp"))
    (repo / "kernels/link.toml").symlink_to(elsewhere)
    with pytest.raises(UserError, match="kernels/link.toml: the manifest is a link to .*, outside "
                                        "the repository"):
        load_project(repo, [repo / "kernels/link.toml"])


def test_shown_escapes_control_characters_only():
    assert shown("a\nb\tü$") == "a\\nb\\tü$"


def test_the_importers_run_where_their_python_path_holds_dollars(tmp_path):
    from iree_kernels.scons.imports import CapturingSpawn
    folder = tmp_path / "$(touch x)${y}" / "bin"
    folder.mkdir(parents=True)
    python = folder / "python-of-this-checkout"
    python.symlink_to(sys.executable)
    word = toolchains.command_word(str(python))
    assert "$" not in word
    spawn = CapturingSpawn(60, False, str, "IREE_IMPORT_ONNXTIMEOUT")
    status = spawn(None, None, None, [word, "-c", "print('imported')"], dict(os.environ))
    assert status == 0, spawn.reason
