"""iree_kernels.check.benchmarks: timings read from iree-benchmark-module's JSON, and the table of them."""
from __future__ import annotations

import json
import sys

import pytest

from iree_kernels.check import benchmarks
from iree_kernels.check.benchmarks import Result

# What iree-benchmark-module --benchmark_format=json prints: repetitions, then aggregates.
RUNS = {"benchmarks": [
    {"run_name": "BM_main_dispatch_0/process_time/real_time", "run_type": "iteration",
     "real_time": 2000.0, "time_unit": "ns"},
    {"run_name": "BM_main_dispatch_0/process_time/real_time", "run_type": "iteration",
     "real_time": 4.0, "time_unit": "us"},
    {"run_name": "BM_main_dispatch_0/process_time/real_time", "run_type": "iteration",
     "real_time": 0.005, "time_unit": "ms"},
    {"run_name": "BM_main_dispatch_1/process_time/real_time", "run_type": "iteration",
     "real_time": 10.0, "time_unit": "us"},
    {"run_name": "BM_main_dispatch_0/process_time/real_time_mean", "run_type": "aggregate",
     "real_time": 999.0, "time_unit": "us"},
]}


@pytest.fixture
def benchmark_module(tmp_path):
    path = tmp_path / "iree-benchmark-module"
    path.write_text(f"#!{sys.executable}\nimport sys\n"
                    f"open({str(tmp_path / 'argv')!r}, 'w').write(' '.join(sys.argv[1:]))\n"
                    f"print({json.dumps(RUNS)!r})\n")
    path.chmod(0o755)
    return str(path)


def test_each_functions_median_is_taken_over_its_repetitions_only(tmp_path, benchmark_module):
    times = benchmarks.times_per_dispatch(benchmark_module, tmp_path / "m.vmfb", "local-task",
                                          ["--benchmark_repetitions=3"])
    assert times == {"main_dispatch_0": pytest.approx(4.0), "main_dispatch_1": pytest.approx(10.0)}
    assert (tmp_path / "argv").read_text() == (
        f"--module={tmp_path / 'm.vmfb'} --device=local-task --benchmark_format=json "
        "--benchmark_repetitions=3")


def test_one_median_over_every_repetition(tmp_path, benchmark_module):
    assert benchmarks.time_per_dispatch(benchmark_module, tmp_path / "m.vmfb", "d", []) == \
        pytest.approx(4.5)                     # 2, 4, 5 and 10 us


def test_speedup_needs_both_timings():
    assert Result("m", "t", "e", "x", "k", plain_us=10.0, substituted_us=4.0).speedup == 2.5
    assert Result("m", "t", "e", "x", "k", plain_us=10.0).speedup is None
    assert Result("m", "t", "e", "x", "k", plain_us=0.0, substituted_us=1.0).speedup is None


def test_the_table_aligns_columns_and_says_why_a_row_has_no_speedup():
    rows = [Result("mlp", "llvm-cpu", "main_dispatch_0", "x", "kernels/k.c", 10.0, 4.0),
            Result("net", "vulkan", "d1", "x", "kernels/k.glsl", 3.0, note="no device")]
    assert benchmarks.table(rows).splitlines() == [
        "model  target    executable       kernel          IREE us  kernel us  speedup",
        "-" * 77,
        "mlp    llvm-cpu  main_dispatch_0  kernels/k.c     10.00    4.00       2.50x",
        "net    vulkan    d1               kernels/k.glsl  3.00     -          no device",
    ]


def test_results_survive_json_with_their_speedup_written():
    results = [Result("mlp", "cuda", "e", "x", "k.cu", 2.0, 1.0, device="cuda", shapes="4x2")]
    text = benchmarks.to_json(results)
    assert json.loads(text)[0]["speedup"] == 2.0
    assert benchmarks.from_json(text) == results


FAILING_COMPILE = """import sys
if any(a.startswith("--iree-hal-substitute-") for a in sys.argv):
    print("k.mlir:3:5: error: 'func.call' op wrapped kernel stands in for what IREE cannot compile")
    print("  %0 = func.call @attention(...)")
    print("note: see current operation: ...")
    sys.exit(1)
open(sys.argv[sys.argv.index("-o") + 1], "w").write("module")
"""


def test_a_benchmark_that_does_not_compile_is_a_note_and_the_rest_goes_on(tmp_path, monkeypatch):
    import SCons.Environment
    import iree_kernels
    from iree_kernels.module.substitution import Applied
    from site_tools import iree_bench
    compiler = tmp_path / "iree-compile"
    compiler.write_text(f"#!{sys.executable}\n{FAILING_COMPILE}")
    compiler.chmod(0o755)
    env = SCons.Environment.Environment(tools=["iree_bench"], toolpath=[iree_kernels.tool_path()],
                                        IREE_COMPILE=str(compiler))
    monkeypatch.setattr(benchmarks, "with_source", lambda dumped, sources, name: "module {}")
    flag = "--iree-hal-substitute-executable-source=main_dispatch_0=k.mlir"
    sub = Applied("m", "llvm-cpu", "main_dispatch_0", "e", "k.mlir", flag, {})
    found = (tmp_path / "module_main_dispatch_0_benchmark.mlir", "")
    monkeypatch.chdir(tmp_path)
    result = iree_bench._measure(env, sub, found, None, tmp_path, "options.flags", "local-sync",
                                 available=False)
    assert result.note == ("the kernel does not compile in a benchmark: k.mlir:3:5: error: "
                           "'func.call' op wrapped kernel stands in for what IREE cannot "
                           "compile; no 'local-sync' device here")
    assert result.plain_module == "main_dispatch_0.plain.vmfb" and result.module == ""


def test_a_kernel_timed_before_keeps_its_timing_until_what_was_timed_changes(
        tmp_path, monkeypatch, benchmark_module):
    # Every 'scons bench' timed every kernel again: 4m38s for five CPU kernels.
    import SCons.Environment
    import iree_kernels
    from iree_kernels.module.substitution import Applied
    from site_tools import iree_bench
    compiler = tmp_path / "iree-compile"
    compiler.write_text(f"#!{sys.executable}\nimport sys\n"
                        "open(sys.argv[sys.argv.index('-o') + 1], 'w').write('module')\n")
    compiler.chmod(0o755)
    env = SCons.Environment.Environment(tools=["iree_bench"], toolpath=[iree_kernels.tool_path()],
                                        IREE_COMPILE=str(compiler),
                                        IREE_BENCHMARK_MODULE=benchmark_module)
    monkeypatch.setattr(benchmarks, "with_source", lambda dumped, sources, name: "module {}")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "options.flags").write_text("--iree-hal-target-device=local\n")
    (tmp_path / "k.mlir").write_text("kernel 1")
    sub = Applied("m", "llvm-cpu", "main_dispatch_0", "e", "k.mlir",
                  "--iree-hal-substitute-executable-source=main_dispatch_0=k.mlir", {})
    found = (tmp_path / "module_main_dispatch_0_benchmark.mlir", "")
    argv = tmp_path / "argv"

    def measure(again=False):
        argv.unlink(missing_ok=True)
        kept = iree_bench.Measurements(tmp_path / "measured", again)
        result = iree_bench._measure(env, sub, found, None, tmp_path, "options.flags",
                                     "local-sync", True, kept)
        kept.forget_the_rest()
        return result, argv.exists()

    first, timed = measure()
    assert timed and first.plain_us == first.substituted_us == 4.5     # the median of RUNS
    again, timed = measure()
    assert not timed and again == first
    (tmp_path / "k.mlir").write_text("kernel 2")             # the kernel changed
    _, timed = measure()
    assert timed and len(list((tmp_path / "measured").iterdir())) == 1
    _, timed = measure(again=True)                           # REMEASURE=yes
    assert timed
