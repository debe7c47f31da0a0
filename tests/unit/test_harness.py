"""tests/harness.py: the step lines it knows, how it parses them, how it runs a command."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

import harness
from harness import Step, parse_steps


def test_the_step_lines_are_the_tools_own():
    from site_tools import (iree_compile_commands, iree_expected, iree_program, iree_project,
                            iree_relink, onnx_import, torch_import)
    from iree_kernels.kinds.registry import KERNEL_KINDS
    declared = {*iree_project.SHORT_COMSTRS.values(), *iree_program.SHORT_COMSTRS.values(),
                *iree_relink.SHORT_COMSTRS.values(),
                onnx_import.SHORT_COMSTR, torch_import.SHORT_COMSTR,
                iree_compile_commands.SHORT_COMSTR, iree_expected.SHORT_COMSTR,
                *(line for kind in KERNEL_KINDS.values() for _, line in kind.short_lines)}
    assert set(harness.short_comstrs()) == declared
    assert {"IREE", "FRONTEND", "PTX", "CODEGEN", "IMPORT", "COMPDB", "CHECK"} <= harness.step_words()


def test_a_renamed_step_is_read_from_the_tool(tmp_path):
    (tmp_path / "tool.py").write_text('SHORT_COMSTRS = {"A": "BUILD    $TARGET"}\n'
                                      'SHORT_COMSTR = "FETCH  $SOURCE"\nOTHER = "NOT  $TARGET"\n')
    assert harness.short_comstrs(tmp_path, kinds=None) == ["BUILD    $TARGET", "FETCH  $SOURCE"]


def test_short_lines_parse_to_step_and_path():
    out = "\n".join([
        "IREE     build/llvm-cpu/mlp.vmfb",
        "PTX      kernels/my kernels/ew.cu",                 # a path may hold spaces
        "CHECK    build/llvm-cpu/mlp.vmfb on local-task",     # the device is no part of it
        "CODEGEN  build/codegen-cache/vulkan/ab12 (main_dispatch_14)",
        "ASSEMBLE  build/llvm-cpu/mlp/module/mlp.mlir",
    ])
    assert parse_steps(out) == [
        ("IREE", "build/llvm-cpu/mlp.vmfb"), ("PTX", "kernels/my kernels/ew.cu"),
        ("CHECK", "build/llvm-cpu/mlp.vmfb"),
        ("CODEGEN", "build/codegen-cache/vulkan/ab12 (main_dispatch_14)"),
        ("ASSEMBLE", "build/llvm-cpu/mlp/module/mlp.mlir")]
    assert parse_steps(out)[0].step == "IREE" and isinstance(parse_steps(out)[0], Step)


@pytest.mark.parametrize("line", [
    "iree-compile models/mlp.mlir -o build/llvm-cpu/mlp.vmfb",   # a verbose command line
    "WARNING  something",                                        # no step of the tools
    "IREE  build/llvm-cpu/mlp.vmfb",                             # not the tool's spacing
    "IREE     ",                                                 # no path
    "scons: `.' is up to date.",
])
def test_other_lines_are_no_steps(line):
    assert parse_steps(line) == []


def _run(stdout: str, returncode: int = 0) -> harness.Run:
    return harness.Run(["scons", "-Q"], harness.REPO, returncode, stdout, "the error\n", 1.5)


def test_ran_lists_one_steps_paths_sorted():
    run = _run("IREE     b.vmfb\nPTX      k.cu\nIREE     a.vmfb\n")
    assert run.ran("IREE") == ["a.vmfb", "b.vmfb"] and run.ran("SPIRV") == []
    assert run.step_counts() == {"IREE": 2, "PTX": 1}


def test_ran_refuses_a_step_no_tool_prints():
    with pytest.raises(ValueError, match="'COMPILE' is no step the tools print"):
        _run("").ran("COMPILE")


def test_a_failure_names_command_folder_status_and_output():
    run = _run("x" * 50 + "last words\n", returncode=2)
    assert not run.ok and run.output.endswith("last words\nthe error\n")
    assert run.failure().startswith(f"scons -Q failed in {harness.REPO} (exit 2):\n")
    assert run.failure(tail=11) == f"scons -Q failed in {harness.REPO} (exit 2):\nlast words\nthe error\n"


def test_run_captures_and_changes_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_GONE", "1")
    script = "import os, sys; print(os.getcwd()); print(os.environ.get('HARNESS_GONE'), " \
             "os.environ['HARNESS_SET']); sys.exit(3)"
    result = harness.run([sys.executable, "-c", script], tmp_path,
                         env={"HARNESS_GONE": None, "HARNESS_SET": 7})
    assert result.returncode == 3 and not result.ok
    assert result.stdout.splitlines() == [str(tmp_path), "None 7"]
    assert result.argv[0] == sys.executable and result.seconds > 0


def test_a_run_past_its_timeout_is_killed_with_what_it_started(tmp_path):
    child = tmp_path / "child.pid"
    script = ("import subprocess, sys; p = subprocess.Popen(['sleep', '60']); "
              f"open({str(child)!r}, 'w').write(str(p.pid)); print('started', flush=True); p.wait()")
    start = time.monotonic()
    with pytest.raises(harness.Timeout, match="ran past 2 s") as raised:
        harness.run([sys.executable, "-c", script], tmp_path, timeout=2)
    assert time.monotonic() - start < 30
    assert raised.value.run.stdout == "started\n"
    pid = int(child.read_text())
    for _ in range(50):                 # the grandchild is killed too, not left running
        if not _running(pid):
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"sleep {pid}, started by the command, still runs")


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"         # a zombie is dead, not yet reaped


def test_scons_argv_is_quiet_with_this_repos_tools():
    assert harness.scons_argv("check") == [str(harness.SCONS), f"--site-dir={harness.SITE_DIR}",
                                           "-Q", "check"]
    assert harness.scons_argv("-c", site_dir=None, program=["python", "-c", "x"]) == \
        ["python", "-c", "x", "-Q", "-c"]


def test_scons_runs_in_the_folder(tmp_path):
    (tmp_path / "SConstruct").write_text("print('read ' + Dir('#').abspath)\n")
    result = harness.scons(tmp_path, "-n", site_dir=None)
    assert result.ok, result.failure()
    assert f"read {tmp_path}" in result.stdout and result.steps == []


def test_a_benchmark_functions_workload_is_read_from_its_name():
    from iree_kernels.check.harness import workload_of
    name = "main_dispatch_0_embedded_elf_x86_64_main_dispatch_0_elementwise_D_f32_5000x5000"
    assert workload_of(name) == (5000, 5000)
    assert workload_of(name + "_site2") == (5000, 5000)
    assert workload_of('"main$async_dispatch_1_embedded_elf_x86_64_x_8x128_site1"') == (8, 128)
    assert workload_of("main_dispatch_0_embedded_elf_x86_64_main_dispatch_0_generic") is None
