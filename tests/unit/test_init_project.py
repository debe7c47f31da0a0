"""python -m iree_kernels init: the files a new repo starts with, and refusing to overwrite."""
from __future__ import annotations

import re

import pytest
from conftest import REPO
from iree_kernels.__main__ import main
from iree_kernels.core.errors import UserError
from iree_kernels.project.init_project import init
from iree_kernels.project.manifest import load_project

README = (REPO / "README.md").read_text()


def test_init_writes_the_readmes_sconstruct_folders_and_a_gitignore(tmp_path):
    root = tmp_path / "repo"
    assert main(["init", str(root)]) == 0
    sconstruct = re.search(r"two lines of `SConstruct`:\n\n```python\n(.*?)```", README,
                           re.S).group(1)
    assert (root / "SConstruct").read_text() == sconstruct
    assert (root / "models").is_dir()
    ignored = (root / ".gitignore").read_text().splitlines()
    assert {"/build/", ".sconsign.dblite", "/compile_commands.json"} <= set(ignored)


def test_the_example_manifest_declares_nothing_and_is_valid_once_uncommented(tmp_path):
    init(tmp_path)
    manifest = tmp_path / "kernels/kernels.toml"
    project = load_project(tmp_path, [manifest])
    assert not project.models and not project.substitutions
    example = "\n".join(line[2:] for line in manifest.read_text().splitlines()
                        if line.startswith("# [") or re.match(r"# \w+ = ", line))
    for path in re.findall(r'(?:source|file) = "([^"]+)"', example):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    manifest.write_text(example)
    project = load_project(tmp_path, [manifest])
    assert list(project.models) == ["mymodel"] and len(project.substitutions) == 1


def test_init_refuses_to_overwrite_and_then_writes_nothing(tmp_path, capsys):
    (tmp_path / ".gitignore").write_text("mine\n")
    with pytest.raises(UserError, match=r"\.gitignore: exists"):
        init(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".gitignore"]
    assert (tmp_path / ".gitignore").read_text() == "mine\n"
    assert main(["init", str(tmp_path)]) == 1
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("name", [".gitignore", "kernels/kernels.toml", "SConstruct"])
def test_init_never_writes_through_a_dangling_link(tmp_path, name):
    outside = tmp_path / "outside.txt"
    root = tmp_path / "repo"
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).symlink_to(outside)
    with pytest.raises(UserError, match=re.escape(f"{name}: is a symbolic link")):
        init(root)
    assert not outside.exists()
    assert (root / name).is_symlink()


def test_init_never_writes_into_a_linked_kernels_folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    root = tmp_path / "repo"
    root.mkdir()
    (root / "kernels").symlink_to(outside)
    with pytest.raises(UserError, match="kernels: is a symbolic link"):
        init(root)
    assert list(outside.iterdir()) == []
