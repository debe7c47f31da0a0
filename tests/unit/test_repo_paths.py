"""project/repo_paths: which paths a user may write, and IREE's dump names in a folder of kernels."""
from __future__ import annotations

import pytest

from iree_kernels.project.repo_paths import repo_path

DUMP_NAME = "module_main$async_dispatch_3.mlir"


@pytest.fixture
def repo(tmp_path):
    for name in (DUMP_NAME, "module_x${TARGET}.mlir", "main$async.c", "plain.mlir"):
        (tmp_path / "k" / name).parent.mkdir(exist_ok=True)
        (tmp_path / "k" / name).write_text("")
    (tmp_path / "a$b").mkdir()
    (tmp_path / "a$b" / "plain.mlir").write_text("")
    return tmp_path


def test_a_folders_kernel_may_keep_the_name_iree_dumped_it_under(repo):
    assert repo_path(repo, f"k/{DUMP_NAME}", dump_name=True) == f"k/{DUMP_NAME}"
    assert repo_path(repo, "k/plain.mlir", dump_name=True) == "k/plain.mlir"


def test_a_dollar_is_refused_where_no_dump_name_is_expected(repo):
    with pytest.raises(ValueError, match=r"contains '\$'.*named with '_' for it"):
        repo_path(repo, f"k/{DUMP_NAME}")


@pytest.mark.parametrize("value", ["k/module_x${TARGET}.mlir",      # SCons would evaluate it
                                   "k/main$async.c",                # not a source IREE dumps
                                   "a$b/plain.mlir"])               # the folder is the user's
def test_only_a_dump_names_dollar_is_let_through(repo, value):
    with pytest.raises(ValueError, match=r"contains '\$'"):
        repo_path(repo, value, dump_name=True)
