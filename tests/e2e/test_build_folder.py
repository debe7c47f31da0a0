"""The build folder is the build's: it writes only into a folder it made, and 'scons -c'
removes only what a build writes there."""
from __future__ import annotations

import shlex
import subprocess

import pytest

from conftest import REPO

ELEMENTWISE = """\
[models.elementwise]
source = "models/elementwise.mlir"
targets = ["llvm-cpu"]
"""
CPU = "IREE_TARGETS=llvm-cpu"


def _elementwise(project):
    project.copy(REPO / "models/elementwise.mlir", "models/elementwise.mlir")
    project.write("kernels/k.toml", ELEMENTWISE)
    return project


def _one_line_refusal(run, start: str) -> None:
    assert run.returncode == 2, run.output
    assert run.output.strip().startswith(f"scons: *** {start}"), run.output
    assert len(run.output.strip().splitlines()) == 1 and "Traceback" not in run.output


def test_clean_with_build_dir_in_git_is_refused_and_git_keeps_its_history(project):
    _elementwise(project)
    subprocess.run(["git", "init", "-q", str(project.root)], check=True, timeout=60)
    head = (project.root / ".git" / "HEAD").read_text()
    run = project.scons(CPU, "BUILD_DIR=.git", "-c", expect_ok=False)
    _one_line_refusal(run, "BUILD_DIR=.git: inside the repository's .git folder")
    assert (project.root / ".git" / "HEAD").read_text() == head
    run = project.scons(CPU, "BUILD_DIR=.git/objects/x", expect_ok=False)
    _one_line_refusal(run, "BUILD_DIR=.git/objects/x: inside the repository's .git folder")


def test_clean_of_a_folder_the_build_never_made_is_refused_and_removes_nothing(project):
    _elementwise(project)
    notes = project.write("docs/notes.md", "mine\n")
    run = project.scons(CPU, "BUILD_DIR=docs", "-c", expect_ok=False)
    _one_line_refusal(run, "BUILD_DIR=docs: the folder holds what the build did not write "
                           "(notes.md) and no .iree-kernels-build marker")
    assert notes.read_text() == "mine\n"
    assert sorted(p.name for p in notes.parent.iterdir()) == ["notes.md"]
    run = project.scons(CPU, "BUILD_DIR=docs", expect_ok=False)      # nor does it build there
    _one_line_refusal(run, "BUILD_DIR=docs: the folder holds what the build did not write")


def test_clean_removes_what_the_build_wrote_and_keeps_what_a_user_put_in_its_folder(project):
    _elementwise(project)
    project.scons(CPU, "BUILD_DIR=out")
    out = project.root / "out"
    assert (out / ".iree-kernels-build").is_file() and (out / "llvm-cpu").is_dir()
    mine = project.write("out/mine.txt", "mine\n")
    project.scons(CPU, "BUILD_DIR=out", "-c")
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert mine.read_text() == "mine\n"


def test_clean_of_a_folder_only_the_build_wrote_removes_it_whole(project):
    _elementwise(project)
    project.scons(CPU)
    project.scons(CPU, "-c")
    assert not (project.root / "build").exists()


def test_an_older_build_s_folder_without_the_marker_is_taken_as_the_build_s(project):
    _elementwise(project)
    project.scons(CPU)
    (project.root / "build" / ".iree-kernels-build").unlink()
    assert project.scons(CPU, "--question").ok
    project.scons(CPU, "-c")
    assert not (project.root / "build").exists()


def test_a_folder_holding_another_builds_folder_is_taken_and_clean_leaves_that_one(project):
    _elementwise(project)
    project.scons(CPU, "BUILD_DIR=build/archs")          # a nested build, made first
    project.scons(CPU)
    assert (project.root / "build/llvm-cpu").is_dir()
    project.scons(CPU, "-c")
    assert sorted(p.name for p in (project.root / "build").iterdir()) == ["archs"]
    assert (project.root / "build/archs/.iree-kernels-build").is_file()


def test_two_build_folders_built_at_once_keep_their_own_records(project):
    # One .sconsign.dblite at the root: each build wrote back its own view and lost the other's.
    from harness import scons_argv
    _elementwise(project)
    builds = [subprocess.Popen(scons_argv(CPU, f"BUILD_DIR={folder}"), cwd=project.root,
                               stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
              for folder in ("b1", "b2")]
    assert [build.wait(timeout=600) for build in builds] == [0, 0]
    for folder in ("b1", "b2"):
        assert project.scons(CPU, f"BUILD_DIR={folder}", "--question").returncode == 0, folder
        assert (project.root / folder / ".sconsign.dblite").is_file()
    assert not (project.root / ".sconsign.dblite").exists()


def _read_only_view_works() -> bool:
    try:
        return subprocess.run(["unshare", "-m", "sh", "-c", "mount --bind / /mnt"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _read_only_view_works(), reason="no mount namespace to make a "
                    "read-only view of the checkout in")
def test_a_read_only_checkout_answers_question_and_dry_run(project):
    from harness import scons_argv
    _elementwise(project)
    project.scons(CPU)
    looks = " ; ".join(f"{shlex.join(scons_argv(CPU, *look))} ; echo status $?"
                       for look in (("--question",), ("-n",), ()))
    root = shlex.quote(str(project.root))
    read_only = subprocess.run(["unshare", "-m", "sh", "-c",
                                f"mount --bind {root} {root} && mount -o remount,bind,ro {root} "
                                f"{root} && cd {root} && {looks}"],
                               capture_output=True, text=True, timeout=600)
    statuses = [line for line in read_only.stdout.splitlines() if line.startswith("status ")]
    assert statuses == ["status 0", "status 0", "status 2"], read_only.stdout + read_only.stderr
    assert "scons: *** BUILD_DIR: cannot create " in read_only.stdout        # the build: one line
