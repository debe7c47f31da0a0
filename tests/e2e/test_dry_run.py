"""scons -n lists the steps the build then runs, in order, after a kernel, manifest, model edit."""
from __future__ import annotations

from conftest import REPO
from harness import Step

MODULE = "build/llvm-cpu/saxpy.vmfb"

MANIFEST = """\
[models.saxpy]
source = "models/saxpy.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "saxpy"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/saxpy.c"
workgroup_count = ["ceildiv(w0, 1024)"]
"""
# Each edit changes what its step makes (a comment would not: the object stays the same bytes).
EDITS = [
    ("kernels/saxpy.c", "ITEMS_PER_WORKGROUP = 1024", "ITEMS_PER_WORKGROUP = 512"),
    ("kernels/saxpy.toml", "ceildiv(w0, 1024)", "ceildiv(w0, 512)"),
    ("models/saxpy.mlir", "2.0 : f32", "3.0 : f32"),
]


def in_order_within(steps, listed) -> bool:
    """Whether ``steps`` are among ``listed`` in the same order."""
    rest = iter(listed)
    return all(step in rest for step in steps)


def test_a_dry_run_lists_exactly_the_steps_the_build_then_runs(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.c")
    project.write("kernels/saxpy.toml", MANIFEST)
    project.scons()
    for path, old, new in EDITS:
        text = project.read(path)
        assert old in text
        project.write(path, text.replace(old, new))
        listed = project.scons("-n").steps
        assert project.scons("--question", expect_ok=False).returncode != 0   # -n built nothing
        ran = project.scons().steps
        # The wrapper names the kernel and reads none of it: a kernel edit lists no WRAP and
        # no unlinked compile (its placeholder comes from the wrapper), and the build runs none.
        assert len(ran) > 1 and listed == ran, (path, listed, ran)
        # Last, the module: compiled, or relinked from the unlinked one.
        assert listed[-1] in (Step("IREE", MODULE), Step("RELINK", MODULE)), (path, listed)


def test_a_dry_run_after_a_comment_edit_lists_what_may_run(project):
    project.copy(REPO / "models/saxpy.mlir", "models/saxpy.mlir")
    project.copy(REPO / "kernels/cpu/saxpy.c", "kernels/saxpy.c")
    project.write("kernels/saxpy.toml", MANIFEST)
    project.scons()
    project.write("kernels/saxpy.c", project.read("kernels/saxpy.c") + "// a comment\n")
    listed = project.scons("-n").steps
    ran = project.scons().steps
    # The object comes out the same bytes, which only compiling it shows: the build stops
    # after CC, the dry run lists every step that would follow a changed object.
    assert ran == [Step("CC", "kernels/saxpy.c")], ran
    assert in_order_within(ran, listed) and listed[-1] == Step("RELINK", MODULE), listed
