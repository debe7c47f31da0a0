"""The test suite's memo of iree-compile (tests/compile_memo.py): it answers a compile only
with what the same compile wrote, and a change to anything the compiler reads misses."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import compile_memo

# Stands for iree-compile: writes "compiled " + its input and every file its flag values name
# to -o, a listing into --dump-to=DIR, and prints "warning: slow". Exit 3 for input "fail".
FAKE = """
import os, sys
if sys.argv[1:] == ["--version"]:
    sys.exit(print("fake compiler version 1"))
args = [t for a in sys.argv[1:] for t in (open(a[1:]).read().split() if a[0] == "@" else [a])]
out = args[args.index("-o") + 1]
text = sys.stdin.read() if args[0] == "-" else open(args[0]).read()
if text == "fail":
    sys.exit(3)
if text == "crash":
    os.kill(os.getpid(), 11)
named = [v.split("=")[-1] for v in args if v.startswith("--") and os.path.isfile(v.split("=")[-1])]
with open(out, "w") as f:
    f.write("compiled " + text + "".join(open(n).read() for n in named))
for a in args:
    if a.startswith("--dump-to="):
        os.makedirs(a.split("=", 1)[1], exist_ok=True)
        open(os.path.join(a.split("=", 1)[1], "listing.txt"), "w").write("dumped " + text)
print("warning: slow", file=sys.stderr)
"""


@pytest.fixture
def memo(tmp_path, monkeypatch):
    """The memo program standing for FAKE, its records in tmp_path/records."""
    real = tmp_path / "real-compile"
    real.write_text(f"#!{sys.executable}\n{FAKE}")
    real.chmod(0o755)
    program = tmp_path / "iree-compile"
    program.write_text(compile_memo.program(str(real), str(tmp_path / "records")))
    program.chmod(0o755)
    monkeypatch.setattr(compile_memo, "REAL", str(real))
    return program


def tally(tmp_path) -> list[str]:
    """The outcomes in the memo's tally, without their seconds and keys."""
    return [line.split(" ", 3)[3] for line in (tmp_path / "records/tally").read_text().splitlines()]


def checkout(root: Path, model: str = "model text", kernel: str = "kernel bytes") -> Path:
    (root / "build").mkdir(parents=True)
    (root / "model.mlir").write_text(model)
    (root / "kernel.o").write_text(kernel)
    (root / "options.flags").write_text("--target=x --object=main_0=kernel.o\n")
    return root


def compile_in(memo, root: Path, *flags: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(memo), "model.mlir", "@options.flags", *flags,
                           "-o", str(root / "build/out.vmfb")], cwd=root, capture_output=True,
                          text=True)


def test_the_same_compile_in_another_folder_is_answered_with_what_the_first_wrote(memo, tmp_path):
    first, second = checkout(tmp_path / "a"), checkout(tmp_path / "b")
    runs = [compile_in(memo, root, f"--dump-to={root / 'build/dump'}") for root in (first, second)]
    assert [r.returncode for r in runs] == [0, 0]
    assert tally(tmp_path) == ["recorded", "replayed"]
    for name in ("out.vmfb", "dump/listing.txt"):
        assert (first / "build" / name).read_bytes() == (second / "build" / name).read_bytes()
    assert (second / "build/out.vmfb").read_text() == "compiled model textkernel bytes"
    assert runs[1].stderr == "warning: slow\n"


@pytest.mark.parametrize("change", ["model", "kernel", "flags"])
def test_a_change_to_the_model_an_object_or_a_flag_file_compiles_again(memo, tmp_path, change):
    first = checkout(tmp_path / "a")
    second = checkout(tmp_path / "b", **{change: "other"} if change != "flags" else {})
    if change == "flags":
        (second / "options.flags").write_text("--target=y --object=main_0=kernel.o\n")
    for root in (first, second):
        assert compile_in(memo, root).returncode == 0
    assert tally(tmp_path) == ["recorded", "recorded"]


def test_an_object_named_in_the_model_text_is_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_memo, "REAL", sys.executable)
    root = checkout(tmp_path / "a", model='{cpu_features = "", ab = "\\"q"} '
                                          'objects([#hal.executable.object<{path = "kernel.o"}>])')
    key = compile_memo.Compile(["model.mlir", "-o", "out"], str(root)).key
    (root / "kernel.o").write_text("edited kernel")
    edited = compile_memo.Compile(["model.mlir", "-o", "out"], str(root)).key
    assert edited != key
    assert compile_memo.Compile(["model.mlir", "-o", "elsewhere"], str(root)).key == edited


def test_an_input_is_keyed_by_its_path_in_the_folder_and_a_scratch_input_by_its_name(
        tmp_path, monkeypatch):
    monkeypatch.setattr(compile_memo, "REAL", sys.executable)
    root = checkout(tmp_path / "a")
    (root / "models").mkdir()
    (root / "models/model.mlir").write_text("model text")
    def key(*argv):
        return compile_memo.Compile([*argv, "-o", "out"], str(root)).key
    assert key("model.mlir") != key("models/model.mlir")        # a compiler may print the path
    assert key("model.mlir") == key(str(root / "model.mlir"))
    for scratch in ("s1", "s2"):
        (tmp_path / scratch).mkdir()
        (tmp_path / scratch / "model.mlir").write_text("model text")
    assert key(str(tmp_path / "s1/model.mlir")) == key(str(tmp_path / "s2/model.mlir"))
    for scratch in (".tmp-1-harness-a", ".tmp-2-harness-b"):
        (root / scratch).mkdir()
        (root / scratch / "model.mlir").write_text("model text")
    assert key(".tmp-1-harness-a/model.mlir") == key(".tmp-2-harness-b/model.mlir")


def test_where_it_writes_is_not_part_of_the_key(tmp_path, monkeypatch):
    monkeypatch.setattr(compile_memo, "REAL", sys.executable)
    root = checkout(tmp_path / "a")
    keys = {compile_memo.Compile(["model.mlir", "@options.flags", f"--x-dump-to=d{n}", "-o", f"o{n}"],
                                 str(root)).key for n in range(2)}
    assert len(keys) == 1


@pytest.mark.parametrize("argv", [["--version"], ["-", "-o", "out"], ["model.mlir"],
                                  ["model.mlir", "--dump-compilation-phases=x", "-o", "out"],
                                  ["model.mlir", "@missing.flags", "-o", "out"],
                                  ["model.mlir", "--flag", "value", "-o", "out"]])
def test_a_compile_it_cannot_key_runs_unrecorded(tmp_path, monkeypatch, argv):
    monkeypatch.setattr(compile_memo, "REAL", sys.executable)
    with pytest.raises(compile_memo.Unrecorded):
        compile_memo.Compile(argv, str(checkout(tmp_path / "a")))


def test_its_version_is_the_compilers_and_is_asked_each_time(memo, tmp_path):
    for _ in range(2):
        asked = subprocess.run([memo, "--version"], capture_output=True, text=True, check=True)
        assert asked.stdout == "fake compiler version 1\n"
    assert not (tmp_path / "records").exists()


def test_what_it_reads_from_stdin_is_keyed_by_its_bytes(memo, tmp_path):
    outputs = []
    for folder, text in (("a", "kernel one"), ("b", "kernel one"), ("c", "kernel two")):
        root = checkout(tmp_path / folder)
        run = subprocess.run([str(memo), "-", "-o", "build/out.vmfb"], cwd=root, input=text,
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        outputs.append((root / "build/out.vmfb").read_text())
    assert outputs == ["compiled kernel one", "compiled kernel one", "compiled kernel two"]
    assert tally(tmp_path) == ["recorded", "replayed", "recorded"]


def test_a_failed_compile_is_not_recorded(memo, tmp_path):
    for root in (checkout(tmp_path / "a", model="fail"), checkout(tmp_path / "b", model="fail")):
        assert compile_in(memo, root).returncode == 3
    assert tally(tmp_path) == ["failed", "failed"]


def test_a_compiler_killed_by_a_signal_is_reported_killed_by_it(memo, tmp_path):
    assert compile_in(memo, checkout(tmp_path / "a", model="crash")).returncode == -11
    assert tally(tmp_path) == ["failed"]


def test_a_compile_whose_output_names_its_folder_is_not_recorded(memo, tmp_path):
    root = checkout(tmp_path / "a")
    (root / "model.mlir").write_text(f"loc({str(root)!r})")
    for _ in range(2):
        assert compile_in(memo, root).returncode == 0
    assert tally(tmp_path) == ["compiled where it ran"] * 2
