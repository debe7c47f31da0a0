"""'scons expected' writes a model's expected outputs; 'scons check' never passes on a stale module.

The model is a torch export in miniature: its weights are ``dense_resource``
constants, one inlined into an executable, one kept by the host program.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import DATA

MODEL = (DATA / "models/resources.mlir").read_text()
MANIFEST = """\
[models.res]
source = "models/res.mlir"
targets = ["llvm-cpu"]
"""
SUBSTITUTION = """
[[substitutions]]
model = "res"
target = "llvm-cpu"
executable = "main_dispatch_0"
file = "kernels/res_add.mlir"
"""


def _with_dumped_kernel(project, edit=lambda text: text):
    """The model's one executable, dumped with the resource it uses, edited, as its kernel."""
    project.scons("dump")
    dumped = project.read("build/llvm-cpu/res/dump/sources/module_main_dispatch_0.mlir")
    assert 'inside: "0x040000000000803F' in dumped      # the weight travels with the executable
    project.write("kernels/res_add.mlir", edit(dumped))
    project.write("kernels/m.toml", MANIFEST + SUBSTITUTION)


def test_check_without_expected_outputs_builds_the_module_and_names_the_file_to_create(project):
    project.write("models/res.mlir", MODEL)
    project.write("kernels/m.toml", MANIFEST)
    _with_dumped_kernel(project)
    build = project.scons("check")
    assert build.made_modules() == ["build/llvm-cpu/res.vmfb"]      # built, though not checked
    assert "create models/res.expected.toml ('scons expected EXPECTED=res'" in build.stdout
    strict = project.scons("check", "CHECK_STRICT=yes", expect_ok=False)
    assert strict.returncode == 2
    assert "create models/res.expected.toml" in strict.stderr and "(CHECK_STRICT=yes)" in strict.stderr


def test_expected_outputs_come_from_the_plain_module_and_catch_a_wrong_kernel(project):
    project.write("models/res.mlir", MODEL)
    project.write("kernels/m.toml", MANIFEST)
    written = project.scons("expected")
    assert written.ran("EXPECTED") == ["models/res.expected.toml"]
    x = np.load(project.root / "models/res/main.input0.npy")
    assert x.dtype == np.float32 and np.all(np.abs(x) <= 1) and len(set(x.tolist())) == 4
    np.testing.assert_array_equal(np.load(project.root / "models/res/main.output0.npy"),
                                  x + np.float32([1, 2, 3, 4]))
    np.testing.assert_array_equal(np.load(project.root / "models/res/main.output1.npy"),
                                  np.float32([10, 11, 12, 13]))
    assert project.scons("expected", "EXPECTED=res", expect_ok=False).returncode == 2

    _with_dumped_kernel(project, lambda text: text.replace("arith.addf", "arith.subf"))
    wrong = project.scons("check", "-k", expect_ok=False)
    assert "models/res.expected.toml: [[case]] #1" in wrong.stdout + wrong.stderr
    assert "does not produce the expected outputs of @main: result 0" in wrong.output

    _with_dumped_kernel(project)
    right = project.scons("check")
    assert "1 case(s) of models/res.expected.toml matched" in right.stdout


def test_expected_names_what_it_cannot_do(project):
    project.write("models/res.mlir", MODEL)
    project.write("kernels/m.toml", MANIFEST.replace('["llvm-cpu"]', '["vulkan"]'))
    no_reference = project.scons("expected", expect_ok=False)
    assert "model 'res' has no llvm-cpu module to be the reference" in no_reference.stdout
    project.write("kernels/m.toml", MANIFEST)
    unknown = project.scons("expected", "EXPECTED=rez", expect_ok=False)
    assert "no model 'rez' (did you mean 'res'?)" in unknown.stdout


def test_expected_never_replaces_a_users_npy_and_writes_nothing_then(project):
    project.write("models/res.mlir", MODEL)
    project.write("kernels/m.toml", MANIFEST)
    mine = project.write("models/res/main.output0.npy", "mine")
    run = project.scons("expected", expect_ok=False)
    assert run.returncode == 2
    assert "models/res/main.output0.npy exists already; move it away to write it again" in run.output
    assert mine.read_text() == "mine"
    assert sorted(p.name for p in mine.parent.iterdir()) == ["main.output0.npy"]
    assert not (project.root / "models/res.expected.toml").exists()


def test_expected_never_writes_through_a_linked_model_folder(project, tmp_path):
    project.write("models/res.mlir", MODEL)
    project.write("kernels/m.toml", MANIFEST)
    outside = tmp_path / "outside"
    outside.mkdir()
    (project.root / "models/res").symlink_to(outside)
    run = project.scons("expected", expect_ok=False)
    assert run.returncode == 2
    assert ("models/res is a symbolic link; 'scons expected' writes only into folders of the "
            "repository, never through a link") in run.output
    assert list(outside.iterdir()) == []
    assert not (project.root / "models/res.expected.toml").exists()


def test_expected_runs_a_torch_models_main_with_inputs_of_its_shapes(project):
    # A torch module declares no ABI signature: the shapes come from the imported MLIR.
    torch = pytest.importorskip("torch")
    pytest.importorskip("iree.turbine")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.ReLU())
    project.root.joinpath("models").mkdir()
    torch.export.save(torch.export.export(model, (torch.zeros(2, 4),)),
                      project.root / "models/net.pt2")
    project.write("kernels/m.toml", '[models.net]\nsource = "models/net.pt2"\n'
                                    'targets = ["llvm-cpu"]\n')
    project.scons("expected")
    expected = project.read("models/net.expected.toml")
    assert 'function = "main"\n' in expected and "main$async" not in expected
    x = np.load(project.root / "models/net/main.input0.npy")
    assert x.shape == (2, 4) and x.dtype == np.float32
    with torch.no_grad():
        want = model(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(np.load(project.root / "models/net/main.output0.npy"), want,
                               atol=1e-6)
    assert "1 case(s) of models/net.expected.toml matched" in project.scons("check").stdout
