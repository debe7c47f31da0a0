"""Kernel families: a match entry is read with its own rules and expands to one instance per GEMM executable it takes."""
from __future__ import annotations

from pathlib import Path

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.ir.contractions import read_contractions
from iree_kernels.project import families, timings
from iree_kernels.project.manifest import load_project

BLOCK = Path(__file__).parents[1] / "data" / "executables" / "transformer_block.mlir"
ENTRY = """\
[models.block]
source = "models/block.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "block"
target = "llvm-cpu"
"""
FAMILY = 'match = "*batch_matmul*"\nfile = "kernels/gemm.c"\n' \
         'workgroup_count = ["ceildiv(n, 64)", "ceildiv(m, 8)", "batch"]\n'


@pytest.fixture
def repo(tmp_path):
    for name in ("models/block.mlir", "kernels/gemm.c", "kernels/one.c", "kernels/x.glsl"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("")
    return tmp_path


def load(repo, *entries: str):
    path = repo / "kernels/block.toml"
    path.write_text(ENTRY + ENTRY.split("\n\n", 1)[1].join(entries))
    return load_project(repo, [path]).substitutions


def error(repo, entry: str) -> str:
    with pytest.raises(UserError) as e:
        load(repo, entry)
    return str(e.value)


@pytest.fixture(scope="module")
def found() -> dict[str, families.Found]:
    facts = read_contractions(BLOCK.read_text(), str(BLOCK))
    exports = {"main$async_dispatch_2": "main$async_dispatch_2_batch_matmul_1x16x64x64_f32",
               "main$async_dispatch_9": "main$async_dispatch_9_softmax_batch_matmul_like",
               "main$async_dispatch_11": "main$async_dispatch_11_batch_matmul_1x16x64x64_f32",
               "main$async_dispatch_14": "main$async_dispatch_14_batch_matmul_1x16x256x64_f32"}
    return {name: families.Found(export, None if isinstance(facts[name], str) else facts[name],
                                 facts[name] if isinstance(facts[name], str) else "")
            for name, export in exports.items()}


def test_a_family_takes_every_gemm_it_matches_with_its_sizes_in_the_launch(repo, found):
    (entry,) = load(repo, FAMILY)
    subs, (expansion,) = families.expand([entry], found)
    assert [s.executable for s in subs] == ["main$async_dispatch_2", "main$async_dispatch_11",
                                            "main$async_dispatch_14"]
    assert subs[2].workgroup_count == ("ceildiv(256, 64)", "ceildiv(16, 8)", "1")
    assert subs[2].facts["n"] == 256 and subs[2].facts["export"].endswith("1x16x256x64_f32")
    assert expansion.declined == (("main$async_dispatch_9", "it holds no linalg matmul op"),)
    assert "took 3 of 4 executables" in expansion.describe()


def test_an_executable_an_entry_names_is_not_the_familys(repo, found):
    named = 'executable = "main$async_dispatch_11"\nfile = "kernels/one.c"\n' \
            'workgroup_count = [1]\n'
    subs, (expansion,) = families.expand(load(repo, FAMILY, named), found)
    assert [s.executable for s in subs].count("main$async_dispatch_11") == 1
    assert ("main$async_dispatch_11", "an entry of its own names it") in expansion.declined


def test_of_two_families_the_first_takes_an_executable(repo, found):
    subs, (_, second) = families.expand(load(repo, FAMILY, FAMILY.replace("*batch", "*")),
                                        found)
    assert len(subs) == 3 and not second.taken
    assert "the family at kernels/block.toml:5 took it first" in second.describe()


def test_match_goes_with_no_other_selector(repo):
    assert "give match (a family" in error(repo, 'executable = "x"\n' + FAMILY)


def test_a_kernel_that_cannot_read_facts_cannot_be_a_family(repo):
    text = FAMILY.replace("kernels/gemm.c", "kernels/x.glsl")
    assert "a GLSL compute shader cannot be a family (match)" in error(repo, text)


def test_sizes_are_names_only_in_a_familys_workgroup_count(repo):
    load(repo, FAMILY)
    single = 'executable = "x"\nfile = "kernels/one.c"\nworkgroup_count = ["ceildiv(n, 64)"]\n'
    assert "unknown name 'n'" in error(repo, single)


KEEP = 'keep = "faster"\ntimings = "kernels/block.timings.json"\n'


def _timed(repo, found, kernel_us: float) -> None:
    """A timings file recording every instance of FAMILY at ``kernel_us`` against IREE's 10."""
    (entry,) = load(repo, FAMILY + KEEP)
    subs, _ = families.expand([entry], found, root=repo, keep_all=True)
    kernel = (repo / "kernels/gemm.c").read_bytes()
    records = [timings.Timing(s.model, s.target, s.facts["export"],
                              timings.instance_digest(s, kernel), 10.0, kernel_us, "cuda")
               for s in subs]
    path = repo / "kernels/block.timings.json"
    timings.write(path, timings.merged(path, "kernels/block.timings.json", records))


def test_keep_faster_keeps_only_what_the_timings_show_faster(repo, found):
    (entry,) = load(repo, FAMILY + KEEP)
    subs, (expansion,) = families.expand([entry], found, root=repo)
    assert subs == [] and sum("not timed as it is now" in why for _, why in expansion.declined) == 3
    _timed(repo, found, kernel_us=5.0)
    assert len(families.expand([entry], found, root=repo)[0]) == 3
    _timed(repo, found, kernel_us=9.8)                     # within the margin: not a winner
    subs, (expansion,) = families.expand([entry], found, root=repo)
    assert subs == [] and "10.0 us against the kernel's 9.8 us" in expansion.describe()


def test_an_edited_kernel_is_not_timed_until_timed_again(repo, found):
    _timed(repo, found, kernel_us=5.0)
    (repo / "kernels/gemm.c").write_text("// edited\n")
    (entry,) = load(repo, FAMILY + KEEP)
    assert families.expand([entry], found, root=repo)[0] == []
    assert len(families.expand([entry], found, root=repo, keep_all=True)[0]) == 3


def test_a_timings_file_the_build_did_not_write_is_one_error_naming_it(repo, found):
    (repo / "kernels/block.timings.json").write_text('{"format": 1, "timings": [{}]}')
    (entry,) = load(repo, FAMILY + KEEP)
    with pytest.raises(UserError, match="kernels/block.timings.json.*not a timings file"):
        families.expand([entry], found, root=repo)


def test_keep_and_timings_are_a_familys_and_faster_needs_timings(repo):
    assert "keep = \"faster\" needs timings" in error(repo, FAMILY + 'keep = "faster"\n')
    single = 'executable = "x"\nfile = "kernels/one.c"\nworkgroup_count = [1]\n'
    assert "only a family (match) takes 'keep'" in error(repo, single + 'keep = "all"\n')
    assert "must be one of all, faster" in error(repo, FAMILY + 'keep = "winners"\n')
