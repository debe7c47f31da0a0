"""Kernel families: a match entry is read with its own rules and expands to one instance per GEMM executable it takes."""
from __future__ import annotations

from pathlib import Path

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.ir.contractions import read_contractions
from iree_kernels.project import families
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
