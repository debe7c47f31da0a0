"""Selectors: parsing them from manifests, resolving them against a model's executables, fingerprints."""
from __future__ import annotations

import subprocess

import pytest

from conftest import REPO
from iree_kernels.ir import fingerprints
from iree_kernels.module import selection
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Executable, Export, Layout, read_executables
from iree_kernels.project.records import Origin, Substitution
from iree_kernels.project.manifest import load_project
from iree_kernels.ir.program import Program, ProgramExecutable
from iree_kernels.module.substitution import plan_substitutions
from iree_kernels.ir.targets import TARGETS

MODEL = """\
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
file = "kernels/edit.mlir"
"""
PRINT = "sha256:" + "ab12" * 16


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "models/mlp.mlir").write_text("module {}\n")
    (tmp_path / "kernels/edit.mlir").write_text("module {}\n")
    return tmp_path


def load(repo, selector: str):
    path = repo / "kernels/demo.toml"
    path.write_text(MODEL + selector)
    return load_project(repo, [path]).substitutions


def error(repo, selector: str) -> str:
    with pytest.raises(UserError) as e:
        load(repo, selector)
    return str(e.value)


def test_export_selector(repo):
    (sub,) = load(repo, 'export = "*_reduction_4x16_f32"\n')
    assert (sub.executable, sub.export, sub.fingerprint) == ("", "*_reduction_4x16_f32", "")
    assert sub.key == "export=*_reduction_4x16_f32"
    assert sub.origin.entry == "[[substitutions]] #1 (export '*_reduction_4x16_f32' of mlp/llvm-cpu)"
    assert Substitution.from_dict(sub.to_dict()) == sub


def test_fingerprint_selector_is_lower_case(repo):
    (sub,) = load(repo, f'fingerprint = "{PRINT.upper().replace("SHA256", "sha256")}"\n')
    assert sub.fingerprint == PRINT and sub.key == f"fingerprint={PRINT}"


def test_export_with_fingerprint_and_executable_with_fingerprint(repo):
    (sub,) = load(repo, f'export = "*_f32"\nfingerprint = "{PRINT[:19]}"\n')
    assert sub.key == f"export=*_f32 fingerprint={PRINT[:19]}"
    (sub,) = load(repo, f'executable = "main_dispatch_1"\nfingerprint = "{PRINT}"\n')
    assert sub.key == "main_dispatch_1" and sub.selector() == {"executable": "main_dispatch_1",
                                                               "fingerprint": PRINT}


def test_a_selector_is_required(repo):
    assert error(repo, "") == ("kernels/demo.toml:5: [[substitutions]] #1: field 'executable': "
                               "missing the executable to replace: give executable = \"NAME\", "
                               "export = \"PATTERN\" (a glob over export names), fingerprint = "
                               "\"sha256:HEX\" (from scons dump) or, for a family of GEMM "
                               "executables, match = \"PATTERN\"")


def test_executable_and_export_exclude_each_other(repo):
    assert error(repo, 'executable = "main_dispatch_1"\nexport = "*"\n').startswith(
        "kernels/demo.toml:10: [[substitutions]] #1: field 'export': give executable or export, "
        "not both")


@pytest.mark.parametrize("value", ["sha256:abc", "ab12ab12ab12ab12", "sha256:xyzxyzxyzxyz",
                                   "md5:" + "a" * 32, "sha256:" + "a" * 65])
def test_malformed_fingerprints(repo, value):
    assert f"field 'fingerprint': '{value}' is not a fingerprint" in error(
        repo, f'fingerprint = "{value}"\n')


def test_export_is_a_string_without_spaces(repo):
    assert "kernels/demo.toml:9: [[substitutions]] #1: field 'export': must be a non-empty " \
           "string without spaces" in error(repo, 'export = "a b"\n')


def test_the_same_selector_twice(repo):
    message = error(repo, 'export = "*_f32"\n' + MODEL.split("\n\n", 1)[1] + 'export = "*_f32"\n')
    assert message.startswith("kernels/demo.toml:14: [[substitutions]] #2 (export '*_f32' of "
                              "mlp/llvm-cpu): field 'export': the executable selected by "
                              "export=*_f32 of mlp/llvm-cpu is already substituted at "
                              "kernels/demo.toml:5")


# Resolution, against made-up executables: names, exports and fingerprints are all it reads.

def executables(*exports: str) -> dict[str, Executable]:
    layout = Layout((), 0)
    return {f"main_dispatch_{n}": Executable(f"main_dispatch_{n}", "llvm-cpu", "elf",
                                             (Export(f"main_dispatch_{n}_{e}", 0, layout, None),))
            for n, e in enumerate(exports)}


def prints(found: dict) -> dict[str, str]:
    return {name: f"sha256:{n:02}" + "0" * 62 for n, name in enumerate(sorted(found))}


def sub(executable="", export="", fingerprint="") -> Substitution:
    return Substitution("m", "llvm-cpu", executable, "kernels/k.mlir", "source",
                        Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {"export": 5}),
                        export=export, fingerprint=fingerprint)


def resolve_error(subs, found) -> str:
    with pytest.raises(UserError) as e:
        selection.resolve(subs, found, prints(found))
    return str(e.value)


def test_resolve_by_export_and_by_fingerprint():
    found = executables("matmul_4x8_f32", "reduction_4_f32", "matmul_8x8_f32")
    by_export, by_print = sub(export="*_matmul_8x8_f32"), sub(fingerprint="sha256:01" + "0" * 10)
    landed = selection.resolve([by_export, by_print], found, prints(found))
    assert landed[by_export.key] == selection.Landing(
        "main_dispatch_2", "main_dispatch_2_matmul_8x8_f32", "sha256:02" + "0" * 62)
    assert landed[by_print.key].executable == "main_dispatch_1"


def test_export_and_fingerprint_narrow_each_other():
    found = executables("matmul_4x8_f32", "matmul_8x8_f32")
    landed = selection.resolve([sub(export="*_matmul_*", fingerprint="sha256:01" + "0" * 10)],
                               found, prints(found))
    assert [l.executable for l in landed.values()] == ["main_dispatch_1"]
    assert "no executable of m/llvm-cpu with an export matching '*_matmul_*' has fingerprint " \
           "sha256:020000000000" in resolve_error(
               [sub(export="*_matmul_*", fingerprint="sha256:02" + "0" * 10)],
               executables("matmul_4x8_f32", "matmul_8x8_f32", "reduction_f32"))


def test_ambiguous_export_lists_candidates_with_fingerprints():
    message = resolve_error([sub(export="*_matmul_*")], executables("matmul_a", "x", "matmul_b"))
    assert message == ("kernels/demo.toml:5: [[substitutions]] #1: field 'export': 2 "
                       "executables of m/llvm-cpu match; add a fingerprint (or a longer one) to "
                       "choose one: main_dispatch_0 (main_dispatch_0_matmul_a, sha256:00000000000"
                       "00000), main_dispatch_2 (main_dispatch_2_matmul_b, sha256:0200000000000000)")


def test_candidates_are_capped():
    message = resolve_error([sub(export="*_conv_*")], executables(*[f"op{n}" for n in range(14)]))
    assert "no executable of m/llvm-cpu has an export matching '*_conv_*'; its executables: " \
           "main_dispatch_0 (main_dispatch_0_op0)" in message
    assert message.endswith(" and 4 more") and message.count("main_dispatch_") == 20


def test_numbered_name_with_fingerprint_reports_a_move():
    found = executables("a", "b", "c")
    assert selection.resolve([sub("main_dispatch_2", fingerprint="sha256:02" + "0" * 10)], found,
                             prints(found))["main_dispatch_2"].executable == "main_dispatch_2"
    message = resolve_error([sub("main_dispatch_0", fingerprint="sha256:02" + "0" * 10)], found)
    assert message.startswith("kernels/demo.toml:3: [[substitutions]] #1: field 'fingerprint': "
                              "executable "
                              "'main_dispatch_0' has moved: it no longer has fingerprint "
                              "sha256:020000000000 (it has sha256:000000000000); the computation "
                              "with that fingerprint is now executable main_dispatch_2 "
                              "(main_dispatch_2_c)")
    # Seen in an earlier build (the previous resolution landed on it): what it computes changed.
    with pytest.raises(UserError, match="has moved: .*no executable has that fingerprint now: "
                                        "what it computes changed"):
        selection.resolve([sub("main_dispatch_0", fingerprint="sha256:09" + "0" * 10)], found,
                          prints(found), seen={"sha256:09" + "0" * 62})


def test_a_fingerprint_never_seen_is_reported_with_the_models_fingerprints():
    found = executables("a", "b", "c")
    message = resolve_error([sub("main_dispatch_0", fingerprint="sha256:09" + "0" * 10)], found)
    assert "has moved" not in message and "changed" not in message
    assert message == (
        "kernels/demo.toml:3: [[substitutions]] #1: field 'fingerprint': no executable of model "
        "'m' on llvm-cpu has fingerprint sha256:090000000000 (executable 'main_dispatch_0' has "
        "sha256:0000000000000000), nor did one in an earlier build (mistyped? `scons dump` lists "
        "them); the fingerprints of its executables: main_dispatch_0 (main_dispatch_0_a, "
        "sha256:0000000000000000), main_dispatch_1 (main_dispatch_1_b, sha256:0100000000000000), "
        "main_dispatch_2 (main_dispatch_2_c, sha256:0200000000000000)")
    alone = resolve_error([sub(fingerprint="sha256:09" + "0" * 10)], found)
    assert alone.startswith("kernels/demo.toml:3: [[substitutions]] #1: field 'fingerprint': no "
                            "executable of model 'm' on llvm-cpu has fingerprint sha256:09000000"
                            "0000, nor did one in an earlier build")
    with pytest.raises(UserError, match="has fingerprint sha256:090000000000 .the model or its "
                                        "options changed what it computes.."):
        selection.resolve([sub(fingerprint="sha256:09" + "0" * 10)], found, prints(found),
                          seen={"sha256:09" + "0" * 62})


def test_unknown_name_still_suggests_the_closest():
    assert "has no executable 'main_dispatch_7' for target 'llvm-cpu' (did you mean " \
           "'main_dispatch_1'?)" in resolve_error([sub("main_dispatch_7")], executables("a", "b"))


def test_two_selectors_landing_on_one_executable():
    message = resolve_error([sub(export="*_b"), sub("main_dispatch_1")], executables("a", "b"))
    assert "selects executable 'main_dispatch_1' of m/llvm-cpu, which kernels/demo.toml:3 " \
           "([[substitutions]] #1) already substitutes" in message


def test_landings_round_trip_and_plan_records_them():
    found = executables("a", "b")
    by_export = sub(export="*_b")
    landed = selection.resolve([by_export], found, prints(found))
    assert selection.loads(selection.dumps(landed)) == landed
    (planned,) = plan_substitutions([by_export], found, landed=landed)
    record = planned.as_record()
    assert (record["executable"], record["export"], record["fingerprint"]) == (
        "main_dispatch_1", "main_dispatch_1_b", "sha256:01" + "0" * 62)
    assert record["selector"] == {"export": "*_b"}
    assert planned.flag == "--iree-hal-substitute-executable-source=main_dispatch_1=kernels/k.mlir"


# Fingerprints of a real dump.

@pytest.fixture(scope="module")
def program():
    argv = [toolchains.iree_compile(), str(REPO / "models/mlp.mlir"),
            *TARGETS["llvm-cpu"].compile_flags, "--compile-to=executable-sources", "-o", "-"]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout


def test_fingerprint_ignores_the_name_only(program):
    with Program(program) as parsed:
        (first, second) = parsed.executables()
    found = fingerprints.fingerprints(program)
    assert found[first.name] == fingerprints.fingerprint(first)
    assert len(found[first.name]) == 7 + 64 and found[first.name] != found[second.name]
    renamed = ProgramExecutable("main_dispatch_9", first.visibility,
                                first.text.replace(first.name, "main_dispatch_9"))
    assert fingerprints.fingerprint(renamed) == found[first.name]
    changed = ProgramExecutable(first.name, first.visibility, first.text.replace("f32", "f16"))
    assert fingerprints.fingerprint(changed) != found[first.name]


def test_renamed_source_takes_the_landed_name(program):
    with Program(program) as parsed:
        text = parsed.executable_text("main_dispatch_1")
    renamed = selection.renamed_source(text, "kernels/k.mlir", "main_dispatch_7")
    (executable,) = read_executables(renamed).values()
    assert executable.name == "main_dispatch_7"
    assert executable.export.name == "main_dispatch_7_reduction_4x16_f32"
    with pytest.raises(UserError, match=r"^kernels/two.mlir: a source kernel selected by export "
                                        r"or fingerprint must hold one hal.executable \(it holds 2\)"):
        selection.renamed_source(program, "kernels/two.mlir", "x")


def test_a_folder_kernel_names_its_executable_with_or_without_the_dump_prefix():
    found = executables("matmul_4x8_f32", "reduction_4_f32")
    found["module_x_dispatch_0"] = Executable("module_x_dispatch_0", "llvm-cpu", "elf", ())
    folder = [Substitution("m", "llvm-cpu", name, f"kernels/f/{name}.mlir", "source",
                           Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {}),
                           folder="kernels/f")
              for name in ("module_main_dispatch_0", "main_dispatch_1", "module_x_dispatch_0")]
    landed = selection.resolve(folder, found, prints(found))
    assert [landed[s.key].executable for s in folder] == \
        ["main_dispatch_0", "main_dispatch_1", "module_x_dispatch_0"]
    # Outside a folder the manifest's name is the executable's.
    assert "has no executable 'module_main_dispatch_0'" in resolve_error(
        [sub(executable="module_main_dispatch_0")], found)


def test_a_folder_kernel_writes_each_dollar_of_its_executables_name_as_an_underscore():
    found = executables("matmul_4x8_f32", "reduction_4_f32")
    for name in ("main$async_dispatch_0", "main$async_dispatch_1", "a$b_c", "a_b$c"):
        found[name] = Executable(name, "llvm-cpu", "elf", ())
    folder = [Substitution("m", "llvm-cpu", name, f"kernels/f/{name}.mlir", "source",
                           Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {}),
                           folder="kernels/f")
              for name in ("main_async_dispatch_1", "module_main_async_dispatch_0")]
    landed = selection.resolve(folder, found, prints(found))
    assert [landed[s.key].executable for s in folder] == \
        ["main$async_dispatch_1", "main$async_dispatch_0"]
    # Two executables spelled the same way: the file names neither.
    ambiguous = Substitution("m", "llvm-cpu", "a_b_c", "kernels/f/a_b_c.mlir", "source",
                             Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {}),
                             folder="kernels/f")
    assert "has no executable 'a_b_c'" in resolve_error([ambiguous], found)
