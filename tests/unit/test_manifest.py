"""Manifest loading: valid manifests become records; every mistake names file, line, entry, field."""
from __future__ import annotations

import pytest

from iree_kernels.core.errors import UserError
from iree_kernels.project.manifest import load_project

GOOD = """\
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan"]
options = { vulkan = ["--iree-opt-level=O1"] }

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main$async_dispatch_1"
file = "kernels/edit.mlir"
"""


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "models").mkdir()
    (tmp_path / "kernels").mkdir()
    (tmp_path / "models/mlp.mlir").write_text("module {}\n")
    (tmp_path / "models/mlp.expected.toml").write_text("")
    (tmp_path / "kernels/edit.mlir").write_text("module {}\n")
    (tmp_path / "kernels/edit.txt").write_text("text\n")
    (tmp_path / "kernels/k.ptx").write_text(".version 9.0\n")
    (tmp_path / "kernels/k.o").write_bytes(b"\x7fELF")
    return tmp_path


def load(repo, text, name="kernels/demo.toml"):
    path = repo / name
    path.write_text(text)
    return load_project(repo, [path])


def error(repo, text) -> str:
    with pytest.raises(UserError) as e:
        load(repo, text)
    return str(e.value)


def test_good_manifest(repo):
    project = load(repo, GOOD)
    model = project.models["mlp"]
    assert model.source == "models/mlp.mlir"
    assert model.targets == ("llvm-cpu", "vulkan")
    assert model.options == {"vulkan": ("--iree-opt-level=O1",)}
    assert model.expected == "models/mlp.expected.toml"
    (sub,) = project.substitutions_for("mlp", "llvm-cpu")
    assert (sub.executable, sub.file, sub.mode) == ("main$async_dispatch_1", "kernels/edit.mlir", "source")
    assert sub.origin.file == "kernels/demo.toml" and sub.origin.line == 6
    assert project.substitutions_for("mlp", "vulkan") == []


def test_targets_default_to_all(repo):
    project = load(repo, '[models.m]\nsource = "models/mlp.mlir"\n')
    assert project.models["m"].targets == ("llvm-cpu", "vulkan", "cuda")


def test_round_trip_through_dict(repo):
    (sub,) = load(repo, GOOD).substitutions
    assert type(sub).from_dict(sub.to_dict()) == sub


def test_a_substitution_carries_its_differential_check_settings(repo):
    (sub,) = load(repo, GOOD).substitutions
    assert (sub.verify, sub.tolerance.describe()) == (True, "the default tolerance")
    (sub,) = load(repo, GOOD + "ulp = 0\nverify = false\n").substitutions
    assert (sub.verify, sub.tolerance.exact) == (False, True)
    assert type(sub).from_dict(sub.to_dict()) == sub


@pytest.mark.parametrize("edit, expected", [
    (lambda t: t.replace('targets = ["llvm-cpu", "vulkan"]', 'targets = ["llvm-cpu", "vulkn"]'),
     "kernels/demo.toml:3: models.mlp: field 'targets': unknown target 'vulkn' (did you mean 'vulkan'?)"),
    (lambda t: t.replace('file = ', 'fiel = '),
     "kernels/demo.toml:10: [[substitutions]] #1: unknown field 'fiel' (did you mean 'file'?)"),
    (lambda t: t.replace('model = "mlp"\n', ''),
     "kernels/demo.toml:6: [[substitutions]] #1: field 'model': missing required field"),
    (lambda t: t.replace('executable = "main$async_dispatch_1"', 'executable = 3'),
     "kernels/demo.toml:9: [[substitutions]] #1: field 'executable': must be a non-empty string"),
    (lambda t: t.replace('model = "mlp"\n', 'model = "mpl"\n'),
     "kernels/demo.toml:7: [[substitutions]] #1 (executable 'main$async_dispatch_1' of mpl/llvm-cpu): "
     "field 'model': unknown model 'mpl' (did you mean 'mlp'?); declared models: mlp"),
    (lambda t: t.replace('target = "llvm-cpu"', 'target = "cuda"'),
     "field 'target': model 'mlp' is not built for target 'cuda'; its targets: llvm-cpu, vulkan"),
    (lambda t: t.replace('kernels/edit.mlir', 'kernels/nope.mlir'),
     "kernels/demo.toml:10: [[substitutions]] #1 (executable 'main$async_dispatch_1' of mlp/llvm-cpu): "
     "field 'file': file not found: kernels/nope.mlir"),
    (lambda t: t.replace('kernels/edit.mlir', '../outside.mlir'),
     "field 'file': '../outside.mlir' is outside the repository"),
    (lambda t: t.replace('kernels/edit.mlir', '/etc/passwd.mlir'),
     "field 'file': '/etc/passwd.mlir' is absolute"),
    (lambda t: t.replace('kernels/edit.mlir', 'kernels/$(rm -rf x).mlir'),
     "field 'file': path 'kernels/$(rm -rf x).mlir' contains '$'"),
    (lambda t: t.replace('kernels/edit.mlir', 'kernels/edit.txt'),
     "field 'file': 'kernels/edit.txt' is not a kernel file this tool knows"),
    (lambda t: t.replace('file = "kernels/edit.mlir"', 'file = "kernels/edit.mlir"\nmode = "objekt"'),
     "field 'mode': unknown mode 'objekt' (did you mean 'object'?)"),
    (lambda t: t.replace('file = "kernels/edit.mlir"', 'file = "kernels/edit.mlir"\nmode = "object"'),
     "field 'mode': an MLIR hal.executable source cannot be substituted in object mode"),
    (lambda t: t.replace('target = "llvm-cpu"', 'target = "cuda"')
               .replace('targets = ["llvm-cpu", "vulkan"]', 'targets = ["cuda", "vulkan"]')
               .replace('options = { vulkan = ["--iree-opt-level=O1"] }', '')
               .replace('file = "kernels/edit.mlir"', 'file = "kernels/k.ptx"\nmode = "source"'),
     "field 'mode': a PTX kernel cannot be substituted in source mode: a compiled kernel "
     "replaces IREE's binary (object mode) or is linked by a generated wrapper (wrapped mode); "
     "given as a source, iree-compile fails deep in its lowering"),
    (lambda t: t.replace('file = "kernels/edit.mlir"', 'file = "kernels/k.o"\nmode = "object"'),
     "field 'mode': a native object cannot be substituted in object mode: a native object can "
     "only be linked by a generated wrapper (wrapped mode); substituted as an object or a source "
     "it crashes iree-compile"),
    (lambda t: t.replace('kernels/edit.mlir', 'kernels/k.ptx'),
     "field 'file': a PTX kernel cannot replace an executable of target 'llvm-cpu'; it fits cuda"),
    (lambda t: t.replace('file = "kernels/edit.mlir"', 'file = "kernels/edit.mlir"\n'
                         'workgroup_count = [1]'),
     "field 'workgroup_count': only a wrapped substitution takes 'workgroup_count' (this one is "
     "in source mode)"),
    (lambda t: t.replace('[models.mlp]', '[models."a b"]'),
     "models.a b: model names may use letters, digits"),
    (lambda t: t.replace('options = { vulkan', 'options = { cuda'),
     "field 'options': options for target 'cuda', which this model is not built for"),
    (lambda t: t.replace('["--iree-opt-level=O1"]', '"--iree-opt-level=O1"'),
     "field 'options': options.vulkan must be a list of iree-compile flags"),
    (lambda t: t.replace('[models.mlp]', 'title = "x"\n[models.mlp]'),
     "kernels/demo.toml:1: unknown top-level key 'title'"),
    (lambda t: t.replace('source = "models/mlp.mlir"', 'source = "models/mlp.toml"'),
     "field 'source': 'models/mlp.toml' should end in .mlir, .mlirbc, .onnx or .pt2"),
    (lambda t: t.replace('targets = ["llvm-cpu", "vulkan"]', 'targets = ["llvm-cpu", "vulkan"]\nopset = 17'),
     "kernels/demo.toml:4: models.mlp: field 'opset': only an .onnx source takes 'opset' (this "
     "model's source is models/mlp.mlir)"),
    (lambda t: t + t[t.index("[[substitutions]]"):],
     "kernels/demo.toml:14: [[substitutions]] #2 (executable 'main$async_dispatch_1' of mlp/llvm-cpu): "
     "field 'executable': executable 'main$async_dispatch_1' of mlp/llvm-cpu is already substituted "
     "at kernels/demo.toml:6 ([[substitutions]] #1"),
    (lambda t: t.replace('source = "models/mlp.mlir"', 'source = "models/mlp.mlir'),
     "kernels/demo.toml:2: not valid TOML"),
    (lambda t: t + 'ulp = -1\n',
     "kernels/demo.toml:11: [[substitutions]] #1 (executable 'main$async_dispatch_1' of "
     "mlp/llvm-cpu): field 'ulp': must be a non-negative integer (0: exact)"),
    (lambda t: t + 'atol = "tiny"\n', "field 'atol': must be a non-negative number (0: exact)"),
    (lambda t: t + 'verify = "no"\n', "field 'verify': must be true or false"),
])
def test_errors_name_file_line_entry_field(repo, edit, expected):
    assert expected in error(repo, edit(GOOD))


def test_model_declared_twice_across_manifests(repo):
    (repo / "kernels/a.toml").write_text(GOOD)
    (repo / "kernels/b.toml").write_text('[models.mlp]\nsource = "models/mlp.mlir"\n')
    with pytest.raises(UserError, match=r"kernels/b.toml:1: models.mlp: model 'mlp' is already "
                                         r"declared in kernels/a.toml"):
        load_project(repo, [repo / "kernels/a.toml", repo / "kernels/b.toml"])


ONNX = """\
[models.net]
source = "models/net.onnx"
targets = ["llvm-cpu"]
"""


def test_onnx_source_defaults_to_opset_17(repo):
    (repo / "models/net.onnx").write_bytes(b"")
    net = load(repo, ONNX).models["net"]
    assert (net.source, net.opset, net.imported) == ("models/net.onnx", 17, True)
    assert net.expected is None
    (repo / "models/net.expected.toml").write_text("")
    assert load(repo, ONNX).models["net"].expected == "models/net.expected.toml"
    mlp = load(repo, GOOD).models["mlp"]
    assert (mlp.opset, mlp.imported) == (None, False)


def test_pt2_source_is_imported_and_takes_no_opset(repo):
    (repo / "models/net.pt2").write_bytes(b"")
    net = load(repo, ONNX.replace("net.onnx", "net.pt2")).models["net"]
    assert (net.source, net.opset, net.imported) == ("models/net.pt2", None, True)
    with pytest.raises(UserError, match="only an .onnx source takes 'opset'"):
        load(repo, ONNX.replace("net.onnx", "net.pt2") + "opset = 13\n")


def test_onnx_opset_from_the_manifest(repo):
    (repo / "models/net.onnx").write_bytes(b"")
    assert load(repo, ONNX + "opset = 21\n").models["net"].opset == 21


@pytest.mark.parametrize("value", ["0", "-3", '"17"', "17.0", "true", "[17]", "1001"])
def test_onnx_opset_must_be_a_positive_integer(repo, value):
    (repo / "models/net.onnx").write_bytes(b"")
    message = error(repo, "# an ONNX model\n" + ONNX + f"opset = {value}\n")
    assert message.startswith("kernels/demo.toml:5: models.net: field 'opset': must be an ONNX "
                              "opset version, a positive integer such as 17 (the default), not "), message


def test_an_mlir_kernel_records_the_files_it_links(repo):
    (repo / "kernels/edit.mlir").write_text(
        'hal.executable @x {\n  hal.executable.variant @v target(<"llvm-cpu", "e">) objects(['
        '#hal.executable.object<{path = "kernels/k.o"}>, #hal.executable.object<{path = '
        '"kernels/k.o"}>, #hal.executable.object<{path = "in.o", data = dense<0> : '
        'vector<1xi8>}>]) {\n  }\n}\n')
    (repo / "in.o").write_bytes(b"")
    (sub,) = load(repo, GOOD).substitutions_for("mlp", "llvm-cpu")
    assert sub.objects == ("kernels/k.o",)                # an embedded object reads no file
    assert sub.object_search_path == ""


LINKING = ('hal.executable @x {{\n  hal.executable.variant @v target(<"llvm-cpu", "e">) objects(['
           '#hal.executable.object<{{path = "{}"}}>]) {{\n  }}\n}}\n')


def test_an_object_path_is_looked_up_from_the_root_then_from_the_kernels_folder(repo):
    (repo / "kernels/native").mkdir()
    (repo / "kernels/native/edit.mlir").write_text(LINKING.format("k.o"))
    (repo / "kernels/native/k.o").write_bytes(b"")
    text = GOOD.replace("kernels/edit.mlir", "kernels/native/edit.mlir")
    (sub,) = load(repo, text).substitutions_for("mlp", "llvm-cpu")
    assert (sub.objects, sub.object_search_path) == (("kernels/native/k.o",), "kernels/native")
    (repo / "kernels/native/edit.mlir").write_text(LINKING.format("kernels/k.o"))
    (sub,) = load(repo, text).substitutions_for("mlp", "llvm-cpu")
    assert (sub.objects, sub.object_search_path) == (("kernels/k.o",), "")


@pytest.mark.parametrize("path, expected", [
    ("../outside.o", "kernels/native/edit.mlir:2: the #hal.executable.object path: "
     "'../outside.o' is outside the repository"),
    ("../../outside.o", "kernels/native/edit.mlir:2: the #hal.executable.object path: "
     "'../../outside.o' is outside the repository"),
    ("missing.o", "file not found: missing.o (looked for in the repository root and in "
     "kernels/native/)"),
])
def test_an_object_outside_the_repository_or_missing_is_refused(repo, path, expected):
    (repo / "kernels/native").mkdir()
    (repo / "kernels/native/edit.mlir").write_text(LINKING.format(path))
    (repo.parent / "outside.o").write_bytes(b"")
    message = error(repo, GOOD.replace("kernels/edit.mlir", "kernels/native/edit.mlir"))
    assert expected in message and "\n" not in message


def test_two_kernels_of_a_module_linking_one_name_from_two_folders_is_an_error(repo):
    for folder in ("a", "b"):
        (repo / f"kernels/{folder}").mkdir()
        (repo / f"kernels/{folder}/edit.mlir").write_text(LINKING.format("k.o"))
        (repo / f"kernels/{folder}/k.o").write_bytes(b"")
    text = GOOD.replace("kernels/edit.mlir", "kernels/a/edit.mlir") + \
        GOOD.split("\n\n", 1)[1].replace("kernels/edit.mlir", "kernels/b/edit.mlir") \
        .replace("main$async_dispatch_1", "main$async_dispatch_2")
    message = error(repo, text)
    assert "kernels/a/edit.mlir links 'k.o' from its folder, and kernels/b/k.o exists too" in message


FOLDER = """\
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "vulkan"]

[[substitutions]]
model = "mlp"
target = "vulkan"
from = "kernels/tuned/"
rtol = 0.01
"""


def test_a_folder_of_kernels_is_one_substitution_per_kernel_named_after_its_executable(repo):
    folder = repo / "kernels/tuned"
    folder.mkdir()
    for name in ("module_main_dispatch_0.glsl", "main_dispatch_1.spv", "common.h", ".k.swp"):
        (folder / name).write_text("")
    (folder / "include").mkdir()
    subs = load(repo, FOLDER).substitutions
    assert [(s.executable, s.file, s.mode, s.folder, s.rtol) for s in subs] == [
        ("main_dispatch_1", "kernels/tuned/main_dispatch_1.spv", "object", "kernels/tuned", 0.01),
        ("module_main_dispatch_0", "kernels/tuned/module_main_dispatch_0.glsl", "object",
         "kernels/tuned", 0.01)]
    assert subs[0].origin.entry == ("[[substitutions]] #1 (kernels/tuned/main_dispatch_1.spv) "
                                    "(executable 'main_dispatch_1' of mlp/vulkan)")


@pytest.mark.parametrize("files, edit, expected", [
    (["main_dispatch_0.mlir", "README"], {}, "kernels/demo.toml:8: [[substitutions]] #1: field "
     "'from': kernels/tuned/README is not a kernel file (its name is an executable's and a "
     "kernel suffix: .comp, .glsl, .mlir, .spv); move it out or name it so"),
    (["main_dispatch_0.cu"], {}, "field 'file': a CUDA kernel cannot replace an executable of "
     "target 'vulkan'; it fits cuda"),
    ([], {}, "field 'from': kernels/tuned/ holds no kernels"),
    (["main${TARGET}.mlir"], {}, "contains '$'; paths may use letters, digits, spaces "
     "and . _ + , @ = / - only (a folder's .mlir kernel may keep IREE's dump name, "
     "module_main$async_dispatch_3.mlir: no '{' or '(' after a '$')"),
    (["k.mlir"], {"from": '"kernels/missing"'}, "field 'from': folder not found: kernels/missing"),
    (["k.mlir"], {"from": '"kernels/edit.mlir"'}, "'kernels/edit.mlir' is not a folder"),
    (["k.mlir"], {"from": '"../"'}, "field 'from': '..' is outside the repository"),
    (["k.mlir"], {"executable": '"main_dispatch_0"'}, "kernels/demo.toml:9: [[substitutions]] "
     "#1: field 'executable' does not go with 'from' (a folder of kernels): the folder's files "
     "name the executables"),
])
def test_a_bad_folder_of_kernels_is_one_line_naming_the_entry(repo, files, edit, expected):
    (repo / "kernels/tuned").mkdir()
    for name in files:
        (repo / "kernels/tuned" / name).write_text("")
    text = FOLDER.replace('rtol = 0.01\n', "".join(f"{k} = {v}\n" for k, v in edit.items())) \
        if edit else FOLDER
    if "from" in edit:
        text = text.replace('from = "kernels/tuned/"\n', "")
    message = error(repo, text)
    assert expected in message and "\n" not in message


@pytest.mark.parametrize("links", [{"main_dispatch_1.mlir": "main_dispatch_1.mlir"},
                                   {"a.mlir": "b.mlir", "b.mlir": "a.mlir"}])
def test_a_link_loop_in_a_folder_of_kernels_is_one_line(repo, links):
    (repo / "kernels/tuned").mkdir()
    for name, to in links.items():
        (repo / "kernels/tuned" / name).symlink_to(to)
    message = error(repo, FOLDER)
    assert "field 'from': kernels/tuned/" in message and \
        message.endswith(": too many levels of symbolic links")


DERIVED = """\
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
export = "*_matmul_*"
"""
PIPELINE = "builtin.module(hal.executable(hal.executable.variant(builtin.module(func.func(cse)))))"


def test_a_derived_kernel_is_a_selector_and_pipelines_given_or_read_from_a_file(repo):
    (sub,) = load(repo, DERIVED + f'passes = "{PIPELINE}"\nulp = 4\n').substitutions
    assert (sub.export, sub.file, sub.mode, sub.passes, sub.passes_file, sub.ulp) == \
        ("*_matmul_*", "", "source", (PIPELINE,), "", 4)
    (repo / "kernels/tune.passes").write_text(f"# first\n{PIPELINE}\n\n  builtin.module(canonicalize)\n")
    (sub,) = load(repo, DERIVED + 'passes = "kernels/tune.passes"\n').substitutions
    assert sub.passes == (PIPELINE, "builtin.module(canonicalize)")
    assert sub.passes_file == "kernels/tune.passes"


@pytest.mark.parametrize("edit, expected", [
    ('passes = "kernels/missing.passes"', "field 'passes': file not found: kernels/missing.passes"),
    ('passes = "kernels/edit.txt"', "field 'passes': kernels/edit.txt: 'text' is not a pass "
     "pipeline"),
    ('passes = "canonicalize("', "field 'passes': 'canonicalize(' is not a pass pipeline"),
    (f'passes = "{PIPELINE}"\nfile = "kernels/edit.mlir"', "kernels/demo.toml:10: "
     "[[substitutions]] #1 (export '*_matmul_*' of mlp/llvm-cpu): field 'file' does not go "
     "with 'passes'"),
])
def test_a_bad_derived_kernel_is_one_line_naming_the_entry(repo, edit, expected):
    message = error(repo, DERIVED + edit + "\n")
    assert expected in message and "\n" not in message


@pytest.mark.parametrize("flag, why", [
    ('--iree-hal-preprocess-executables-with=sh -c "id"',
     "'--iree-hal-preprocess-executables-with' can run a program, load a plugin, or read or "
     "write a file the build does not track"),
    ("--iree-hal-dump-executable-sources-to=/outside",
     "'--iree-hal-dump-executable-sources-to' can run a program"),
    ("--iree-codegen-transform-dialect-library=/etc/passwd",
     "'--iree-codegen-transform-dialect-library' names '/etc/passwd', outside the repository"),
])
def test_a_model_option_that_runs_a_program_or_names_a_path_is_refused_at_its_line(repo, flag, why):
    text = GOOD.replace('"--iree-opt-level=O1"', f"'{flag}'")         # a TOML literal string
    with pytest.raises(UserError) as e:
        load(repo, text)
    assert str(e.value).startswith("kernels/demo.toml:4: models.mlp: field 'options': "
                                   f"options.vulkan: {why}"), str(e.value)


@pytest.mark.parametrize("pipeline, why", [
    ('builtin.module(hal.executable(iree-hal-preprocess-executables-with-tool{command={sh -c id}}))',
     "the pipeline uses the pass 'iree-hal-preprocess-executables-with-tool', which can run a "
     "program or read or write a file"),
    ("builtin.module(hal.executable(iree-hal-dump-executable-sources{path=/outside}))",
     "the pipeline uses the pass 'iree-hal-dump-executable-sources'"),
    ("builtin.module(iree-transform-dialect-interpreter{library-file-name=/etc/passwd})",
     "the pipeline uses the pass 'iree-transform-dialect-interpreter'"),
])
def test_a_derived_kernels_pipeline_that_runs_a_program_or_names_a_path_is_refused(repo, pipeline,
                                                                                      why):
    text = (GOOD + '\n[[substitutions]]\nmodel = "mlp"\ntarget = "vulkan"\n'
            f"executable = \"main$async_dispatch_1\"\npasses = '{pipeline}'\n")
    with pytest.raises(UserError) as e:
        load(repo, text)
    assert "field 'passes': " + why in str(e.value), str(e.value)
