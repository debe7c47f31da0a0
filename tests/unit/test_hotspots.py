"""The hotspot report's library: dispatch sites counted in a real program, ranking, shares, formats."""
from __future__ import annotations

import json
import subprocess

import pytest

from conftest import DATA
from iree_kernels.perf import hotspot_report, hotspots
from iree_kernels.core import toolchains
from iree_kernels.perf.hotspot_report import Hotspot, Report
from iree_kernels.module.substitution import read_record
from iree_kernels.ir.targets import TARGETS


@pytest.fixture(scope="module")
def program() -> str:
    argv = [toolchains.iree_compile(), str(DATA / "hotspots.mlir"),
            *TARGETS["llvm-cpu"].compile_flags, "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300).stdout


def test_counts_each_dispatch_site_of_each_entry_point(program):
    rows = {r.executable: r for r in hotspots.count(hotspots.dispatch_sites(program))}
    assert {name: r.dispatches for name, r in rows.items()} == {
        "main_dispatch_0": 2, "main_dispatch_2": 1, "main_dispatch_3": 1, "dynamic_dispatch_0": 1}
    assert rows["main_dispatch_2"].export == "main_dispatch_2_matmul_192x192x192_f32"
    assert rows["main_dispatch_3"].where == ["in a loop"]     # a loop of blocks, counted once
    assert rows["main_dispatch_0"].where == []


def test_names_the_benchmark_function_iree_dumps_for_static_workloads_only(program):
    rows = {r.executable: r for r in hotspots.count(hotspots.dispatch_sites(program))}
    assert rows["main_dispatch_0"].function == \
        "main_dispatch_0_embedded_elf_x86_64_main_dispatch_0_elementwise_64_f32"
    assert rows["dynamic_dispatch_0"].workload is None and rows["dynamic_dispatch_0"].function == ""
    site = hotspots.Site("e", "v", "x", (4, 8))
    assert hotspots.benchmark_function(site) == "e_v_x_4x8"


def test_benchmark_names_match_what_iree_dumps(program, tmp_path):
    path = tmp_path / "executables.mlir"
    path.write_text(program)
    flags = tmp_path / "options.flags"
    flags.write_text("\n".join(TARGETS["llvm-cpu"].compile_flags))
    dumped = tmp_path / "dumped"
    subprocess.run([toolchains.iree_compile(), str(path), f"@{flags}",
                    "--compile-from=executable-sources", "--compile-to=executable-configurations",
                    f"--iree-hal-dump-executable-benchmarks-to={dumped}", "-o", "/dev/null"],
                   check=True, timeout=300)
    functions = {f for p in dumped.glob("*.mlir") for f in hotspots._functions(p.read_text())}
    rows = hotspots.count(hotspots.dispatch_sites(program))
    assert functions == {r.function for r in rows if r.function}
    merged = hotspots.merge_benchmarks([p.read_text() for p in sorted(dumped.glob("*.mlir"))])
    assert set(hotspots._functions(merged)) == functions
    assert merged.count("util.global private @__device_0") == 1


def test_merging_refuses_two_different_definitions_of_a_symbol():
    one = "module {\n  util.global private @g = 1 : i32\n}\n"
    other = "module {\n  util.global private @g = 2 : i32\n}\n"
    assert "util.global" in hotspots.merge_benchmarks([one, one])
    with pytest.raises(ValueError, match="@g"):
        hotspots.merge_benchmarks([one, other])


def rows() -> list[Hotspot]:
    return [Hotspot("light", "light_x", 2, "f_light", us_per_dispatch=1.0, module="m"),
            Hotspot("heavy", "heavy_x", 1, "f_heavy", us_per_dispatch=30.0, module="m",
                    substituted_by="kernels/heavy.c", kernel_us=20.0),
            Hotspot("dyn", "dyn_x", 3, note="no benchmark: dynamic shapes"),
            Hotspot("twice", "twice_x", 4, "f_twice", us_per_dispatch=2.0, module="m",
                    where=["in a loop"])]


def test_ranks_by_dispatches_times_time_and_puts_untimed_rows_last():
    ranked = hotspot_report.ranked(rows())
    assert [r.executable for r in ranked] == ["heavy", "twice", "light", "dyn"]
    assert [r.total_us for r in ranked] == [30.0, 8.0, 2.0, None]
    shares = hotspot_report.shares(ranked)
    assert shares[:3] == pytest.approx([75.0, 20.0, 5.0]) and shares[3] is None


def test_table_has_one_line_per_row_with_rank_share_substitution_and_note():
    text = hotspot_report.table(Report("net", "llvm-cpu", "local-sync", rows()))
    lines = text.splitlines()
    assert lines[0] == ("net on llvm-cpu (local-sync): 10 dispatch sites, 4 entry points, "
                        "3 timed, 40.00 us in all with IREE's executables, 30.00 us with the "
                        "substituted kernels")
    assert "1 repetition: no spread" in lines[1]
    assert lines[2].split() == ["rank", "executable", "export", "dispatches", "us/dispatch",
                                "spread", "total", "us", "share", "%", "substituted", "by",
                                "kernel", "us", "IREE/kernel", "note"]
    assert lines[4].split() == ["1", "heavy", "heavy_x", "1", "30.00", "-", "30.00", "75.0",
                                "kernels/heavy.c", "20.00", "1.50x", "-"]
    assert lines[5].split()[:8] == ["2", "twice", "twice_x", "4", "2.00", "-", "8.00", "20.0"]
    assert lines[5].endswith("in a loop")
    assert lines[7].split()[:5] == ["-", "dyn", "dyn_x", "3", "-"]
    assert lines[7].endswith("no benchmark: dynamic shapes")


def timed(executable: str, dispatches: int, times: list[float]) -> Hotspot:
    row = Hotspot(executable, f"{executable}_x", dispatches, f"f_{executable}", module="m")
    hotspots._take(row, times)
    return row


def test_rows_whose_totals_lie_within_each_others_spread_are_ranked_as_ties():
    found = hotspot_report.ranked([
        timed("a", 1, [10.0, 10.5, 9.5]), timed("b", 1, [9.8, 9.0, 9.6]),
        timed("c", 2, [2.0, 2.1, 1.9]), timed("d", 1, [1.0, 1.0, 1.0]), Hotspot("dyn", "dyn_x", 1)])
    assert [r.executable for r in found] == ["a", "b", "c", "d", "dyn"]
    assert hotspot_report.ranks(found) == ["1=", "1=", "3", "4", "-"]
    assert found[0].us_per_dispatch == 10.0 and found[0].spread == pytest.approx(5.0)
    text = hotspot_report.table(Report("net", "llvm-cpu", "local-sync", found))
    assert "medians of 3 repetitions" in text.splitlines()[1]
    assert text.splitlines()[4].split()[:6] == ["1=", "a", "a_x", "1", "10.00", "±5.0%"]
    # One repetition: no spread, so only equal totals tie.
    single = hotspot_report.ranked([timed("a", 1, [10.0]), timed("b", 2, [5.0]),
                                    timed("c", 1, [9.0])])
    assert hotspot_report.ranks(single) == ["1=", "1=", "3"] and single[0].spread is None


def test_time_takes_the_median_and_range_of_the_repetitions_and_times_the_kernels(monkeypatch):
    measured = {"m": {"f_heavy": [30.0, 33.0, 29.0]}, "k": {"f_heavy": [21.0, 20.0, 19.0]}}
    monkeypatch.setattr(hotspots.benchmarks, "repetitions",
                        lambda program, module, device, flags, timeouts, runner=None: measured[str(module)])
    row = Hotspot("heavy", "heavy_x", 1, "f_heavy", module="m", substituted_by="k.c",
                  kernel_module="k")
    hotspots.time(Report("net", "llvm-cpu", "local-sync", [row]), "bm", [], available=True)
    assert (row.us_per_dispatch, row.us_min, row.us_max, row.repetitions) == (30.0, 29.0, 33.0, 3)
    assert row.kernel_us == 20.0 and row.speedup == pytest.approx(1.5)


def test_the_picture_is_drawn_and_without_matplotlib_one_line_says_so(tmp_path, monkeypatch,
                                                                       capsys):
    report = Report("net", "llvm-cpu", "local-sync", rows())
    text, plotted = hotspot_report.write(report, tmp_path / "hotspots.txt")
    assert plotted and (tmp_path / "hotspots.png").read_bytes()[:4] == b"\x89PNG"
    monkeypatch.setattr(hotspot_report.benchmarks, "pyplot", lambda: None)
    text, plotted = hotspot_report.write(report, tmp_path / "hotspots.txt")
    assert not plotted and not (tmp_path / "hotspots.png").exists()     # no stale picture
    monkeypatch.setattr(hotspots, "time", lambda *args: None)
    assert hotspots.main([str(tmp_path / "hotspots.json")]) == 0
    assert capsys.readouterr().out.endswith(
        "no picture: matplotlib is missing (pip install matplotlib, or the extra: "
        "iree-kernels[plots])\n")


def test_json_round_trips_and_carries_totals_and_shares():
    report = Report("net", "cuda", "cuda", rows(), "--batch_size=10")
    data = json.loads(hotspot_report.to_json(report))
    assert [(r["executable"], r["total_us"], r["share"]) for r in data["rows"]][:2] == \
        [("heavy", 30.0, 75.0), ("twice", 8.0, 20.0)]
    assert data["rows"][0]["speedup"] == 1.5 and data["rows"][0]["rank"] == "1"
    again = hotspot_report.from_json(hotspot_report.to_json(report))
    assert again.flags == "--batch_size=10" and again.device == "cuda"
    assert next(r for r in again.rows if r.executable == "heavy").kernel_us == 20.0
    assert sorted(r.executable for r in again.rows) == sorted(r.executable for r in rows())


def test_attach_notes_rows_iree_dumped_no_benchmark_for_or_could_not_compile():
    found = [Hotspot("a", "a_x", 1, "fa"), Hotspot("b", "b_x", 1, "fb"), Hotspot("c", "c_x", 1)]
    hotspots.attach(found, {"fa": "build/all.vmfb"}, {"fb": "IREE cannot compile its benchmark: x"})
    assert [(r.module, r.note) for r in found] == [
        ("build/all.vmfb", ""), ("", "IREE cannot compile its benchmark: x"),
        ("", "no benchmark: dynamic shapes")]


def test_without_the_device_rows_keep_their_modules_and_say_so():
    report = Report("net", "cuda", "cuda", rows())
    hotspots.time(report, "iree-benchmark-module-that-is-not-run", [], available=False)
    assert {r.note for r in report.rows if r.module} == {"no cuda device here"}
    assert all(r.us_per_dispatch is not None for r in report.rows if r.module)  # as they were


def test_marks_substituted_executables_with_their_kernel_file():
    found = [Hotspot("a", "a_x", 1), Hotspot("b", "b_x", 1)]
    record = read_record(json.dumps({"model": "m", "target": "cuda", "source": "m.mlir",
                                     "substitutions": [{
                                         "model": "m", "target": "cuda", "executable": "b",
                                         "export": "b_x", "file": "kernels/b.cu",
                                         "flag": "--iree-hal-substitute-executable-object=b=b.ptx"}]}))
    hotspots.mark_substituted(found, record.substitutions,
                              {"b": {"module": "build/k/b.vmfb"}, "a": {"module": "x"}})
    assert [r.substituted_by for r in found] == ["", "kernels/b.cu"]
    assert [r.kernel_module for r in found] == ["", "build/k/b.vmfb"]



def test_a_derived_kernel_is_named_by_its_path_and_timed():
    found = [Hotspot("a", "a_x", 1)]
    derived = "build/llvm-cpu/m/a-1234.derived.mlir"
    record = read_record(json.dumps({"model": "m", "target": "llvm-cpu", "source": "m.mlir",
                                     "substitutions": [{
                                         "model": "m", "target": "llvm-cpu", "executable": "a",
                                         "export": "a_x", "file": "", "path": derived,
                                         "flag": f"--iree-hal-substitute-executable-source=a={derived}"}]}))
    hotspots.mark_substituted(found, record.substitutions, {"a": {"module": "build/k/a.vmfb"}})
    assert (found[0].substituted_by, found[0].kernel_module) == (derived, "build/k/a.vmfb")


def test_first_error_line_of_a_tool_output():
    output = "iree-compile failed:\nx.mlir:3:1: error: failed to distribute\nnote: more"
    assert hotspots.first_error(output) == "failed to distribute"


def test_a_benchmark_of_an_executable_with_folded_weights_gets_them_and_compiles(tmp_path):
    # IREE dumps the benchmark without the program's resources: "resource does not exist".
    flags = tmp_path / "options.flags"
    flags.write_text("\n".join(TARGETS["llvm-cpu"].compile_flags))
    program = tmp_path / "executables.mlir"
    subprocess.run([toolchains.iree_compile(), str(DATA / "models/resources.mlir"), f"@{flags}",
                    "--compile-to=executable-sources", "-o", str(program)], check=True, timeout=300)
    dumped = tmp_path / "dumped"
    subprocess.run([toolchains.iree_compile(), str(program), f"@{flags}",
                    "--compile-from=executable-sources", "--compile-to=executable-configurations",
                    f"--iree-hal-dump-executable-benchmarks-to={dumped}", "-o", "/dev/null"],
                   check=True, timeout=300)
    (benchmark,) = dumped.glob("*.mlir")
    assert "dense_resource<" in benchmark.read_text() and "{-#" not in benchmark.read_text()
    hotspots.add_resources([benchmark], program.read_text(), str(program))
    (tmp_path / "compiled").mkdir()
    modules, failures = hotspots.compile_benchmarks(toolchains.iree_compile(), [benchmark],
                                                    str(flags), tmp_path / "compiled")
    assert failures == {} and len(modules) == 1
