"""The manifest's JSON Schema (shipped for editors: taplo, Even Better TOML) agrees with manifest.py,
and it and the docs' table of kernel suffixes are what the kinds generate (project/schema.py).

Every manifest in the repo and every manifest example in the README and docs/ is valid;
each bad manifest below is rejected by both the schema and ``load_project``.
What only the build can check (files existing, substitutions naming declared
models and targets, duplicates, workgroup_count's expression syntax, an
integer written 256.0) is left out of the bad set: the schema describes one
file's shape.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib

import jsonschema
import pytest

from iree_kernels.project import manifest, schema
from iree_kernels.core.errors import UserError
from iree_kernels.project.manifest import MODEL_KEYS, load_project
from iree_kernels.project.substitutions import substitution_keys
from iree_kernels.ir.targets import TARGETS
from iree_kernels.kinds.registry import KERNEL_KINDS, MODES
from conftest import REPO

SCHEMA_FILE = REPO / "site_scons/iree_kernels/data/manifest.schema.json"
SCHEMA = json.loads(SCHEMA_FILE.read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
REGENERATE = ("PYTHONPATH=site_scons ./setup.sh python -m iree_kernels.project.schema --json "
              f"> {schema.SCHEMA_FILE}")

MODELS = """
[models.mlp]
source = "models/mlp.mlir"
targets = ["llvm-cpu", "cuda", "vulkan"]

[models.net]
source = "models/net.onnx"
targets = ["llvm-cpu"]
"""
GOOD = MODELS + """
[models.mlp.options]
cuda = ["--iree-opt-level=O3"]

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
export = "*_matmul_*"
fingerprint = "SHA256:0123456789ab"
file = "kernels/k.mlir"

[[substitutions]]
model = "mlp"
target = "llvm-cpu"
executable = "main_dispatch_1"
file = "kernels/k.c"
workgroup_count = ["ceildiv(w0, 64)", 1]
function = "k"
atol = 1e-4
rtol = 0
ulp = 2

[[substitutions]]
model = "mlp"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/k.cu"
verify = false

[[substitutions]]
model = "mlp"
target = "vulkan"
executable = "main_dispatch_0"
file = "kernels/k.glsl"
mode = "wrapped"
workgroup_size = [64, 2]
workgroup_count = [16]
"""


def sub(**fields) -> str:
    entry = {"model": "mlp", "target": "cuda", "executable": "main_dispatch_0",
             "file": "kernels/k.cu", **fields}
    lines = [f"{key} = {json.dumps(value)}" for key, value in entry.items() if value is not None]
    return MODELS + "\n[[substitutions]]\n" + "\n".join(lines) + "\n"


WRAPPED_C = {"target": "llvm-cpu", "file": "kernels/k.c", "workgroup_count": ["w0"]}
WRAPPED_CU = {"mode": "wrapped", "workgroup_size": [256], "workgroup_count": ["w0"]}
BAD = {
    "unknown top-level key": MODELS + "[tools]\nx = 1\n",
    "models not a table": "models = 1\n",
    "substitutions not an array": MODELS + "substitutions = 1\n",
    "model: unknown field": '[models.m]\nsource = "models/mlp.mlir"\nsorce = "x"\n',
    "model: name with a space": '[models."my model"]\nsource = "models/mlp.mlir"\n',
    "model: no source": '[models.m]\ntargets = ["cuda"]\n',
    "model: source suffix": '[models.m]\nsource = "models/mlp.txt"\n',
    "model: absolute source": '[models.m]\nsource = "/models/mlp.mlir"\n',
    "model: '$' in the source": '[models.m]\nsource = "models/${x}.mlir"\n',
    "model: unknown target": '[models.m]\nsource = "models/mlp.mlir"\ntargets = ["rocm"]\n',
    "model: targets a string": '[models.m]\nsource = "models/mlp.mlir"\ntargets = "cuda"\n',
    "model: options for a target not built": '[models.m]\nsource = "models/mlp.mlir"\n'
        'targets = ["cuda"]\noptions = { vulkan = ["--x"] }\n',
    "model: options for an unknown target": '[models.m]\nsource = "models/mlp.mlir"\n'
        'options = { rocm = ["--x"] }\n',
    "model: a flag without '-'": '[models.m]\nsource = "models/mlp.mlir"\n'
        'options = { cuda = ["iree-opt-level=O3"] }\n',
    "model: a flag with a control character": '[models.m]\nsource = "models/mlp.mlir"\n'
        'options = { cuda = ["--x=\\u0001"] }\n',
    "model: expected not .toml": '[models.m]\nsource = "models/mlp.mlir"\n'
        'expected = "models/mlp.mlir"\n',
    "model: opset of an .mlir source": '[models.m]\nsource = "models/mlp.mlir"\nopset = 17\n',
    "model: opset 0": '[models.m]\nsource = "models/net.onnx"\nopset = 0\n',
    "model: opset a string": '[models.m]\nsource = "models/net.onnx"\nopset = "17"\n',
    "substitution: unknown field": sub(workgroups=[1]),
    "substitution: no model": sub(model=None),
    "substitution: no target": sub(target=None),
    "substitution: no file": sub(file=None),
    "substitution: no selector": sub(executable=None),
    "substitution: executable and export": sub(export="*"),
    "substitution: executable with a space": sub(executable="main dispatch"),
    "substitution: empty executable": sub(executable=""),
    "substitution: bad fingerprint": sub(fingerprint="sha256:xyz"),
    "substitution: short fingerprint": sub(executable=None, fingerprint="sha256:0123"),
    "substitution: unknown target": sub(target="rocm"),
    "substitution: unknown kernel suffix": sub(file="kernels/k.txt"),
    "substitution: .cu for llvm-cpu": sub(target="llvm-cpu"),
    "substitution: .c for cuda": sub(file="kernels/k.c", workgroup_count=["w0"]),
    "substitution: .glsl for cuda": sub(file="kernels/k.glsl"),
    "substitution: unknown mode": sub(mode="linked"),
    "substitution: .c in object mode": sub(**WRAPPED_C, mode="object"),
    "substitution: .mlir in wrapped mode": sub(file="kernels/k.mlir", mode="wrapped",
                                               workgroup_count=[1], workgroup_size=[1]),
    "substitution: .c without workgroup_count": sub(target="llvm-cpu", file="kernels/k.c"),
    "substitution: .c with workgroup_size": sub(**WRAPPED_C, workgroup_size=[64]),
    "substitution: .c with a bad function": sub(**WRAPPED_C, function="9lives"),
    "substitution: wrapped GPU without workgroup_size": sub(**{**WRAPPED_CU,
                                                              "workgroup_size": None}),
    "substitution: wrapped GPU with function": sub(**WRAPPED_CU, function="k"),
    "substitution: object mode with workgroup_count": sub(workgroup_count=["w0"]),
    "substitution: four counts": sub(**{**WRAPPED_CU, "workgroup_count": [1, 1, 1, 1]}),
    "substitution: no counts": sub(**{**WRAPPED_CU, "workgroup_count": []}),
    "substitution: a count neither integer nor string": sub(**{**WRAPPED_CU,
                                                              "workgroup_count": [1.5]}),
    "substitution: workgroup_size 0": sub(**{**WRAPPED_CU, "workgroup_size": [0]}),
    "substitution: four sizes": sub(**{**WRAPPED_CU, "workgroup_size": [1, 1, 1, 1]}),
    "substitution: negative atol": sub(atol=-1),
    "substitution: rtol a string": sub(rtol="0.1"),
    "substitution: ulp a float": sub(ulp=1.5),
    "substitution: atol a boolean": sub(atol=True),
    "substitution: verify a string": sub(verify="no"),
    "substitution: a folder and a file": sub(executable=None, **{"from": "kernels/"}),
    "substitution: a folder and an executable": sub(file=None, **{"from": "kernels/"}),
    "substitution: passes and a file": sub(passes="builtin.module(canonicalize)"),
    "substitution: passes and a mode": sub(file=None, mode="source",
                                           passes="builtin.module(canonicalize)"),
    "substitution: passes without a selector": sub(file=None, executable=None,
                                                   passes="builtin.module(canonicalize)"),
    "substitution: a folder and a launch shape": sub(file=None, executable=None,
                                                     workgroup_count=[1], **{"from": "kernels/"}),
}


@pytest.fixture
def repo(tmp_path):
    for name in ("models/mlp.mlir", "models/mlp.txt", "models/net.onnx", "kernels/k.mlir",
                 "kernels/k.cu", "kernels/k.c", "kernels/k.glsl", "kernels/k.txt"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("module {}\n" if name.endswith(".mlir") else "")
    return tmp_path


def load(repo, text: str):
    path = repo / "kernels/demo.toml"
    path.write_text(text)
    return load_project(repo, [path])


def schema_errors(text: str) -> list[str]:
    return [e.message for e in VALIDATOR.iter_errors(tomllib.loads(text))]


def test_the_schema_file_is_what_the_kinds_generate():
    assert SCHEMA_FILE.read_text() == schema.schema_json(), \
        f"{schema.SCHEMA_FILE} is stale; run: {REGENERATE}"


def test_the_docs_suffix_table_is_what_the_kinds_generate():
    written = (REPO / "docs/manifest.md").read_text()
    start = written.find(schema.TABLE_START)
    table = written[start:written.find(schema.TABLE_END, start) + len(schema.TABLE_END) + 1]
    assert start >= 0 and table == schema.markdown(), (
        "docs/manifest.md's table of kernel suffixes is stale: put in it, between its markers, "
        "what PYTHONPATH=site_scons ./setup.sh python -m iree_kernels.project.schema "
        "--markdown prints")


def test_the_generator_runs_as_a_module():
    out = subprocess.run([sys.executable, "-m", "iree_kernels.project.schema", "--json"],
                         cwd=REPO, env={"PYTHONPATH": str(REPO / "site_scons")},
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert out == schema.schema_json()


def test_a_kind_added_is_in_the_schema_and_the_table(monkeypatch):
    from iree_kernels.kinds.base import KernelKind, KindField
    from iree_kernels.kinds import registry
    monkeypatch.setitem(registry.KERNEL_KINDS, ".fk", KernelKind(
        ".fk", "a fake kernel", ("llvm-cpu",), "wrapped", ("wrapped",),
        fields=(KindField("level", {"type": "integer"}),), doc="fakes it"))
    made = schema.schema()["$defs"]["substitution"]
    assert made["properties"]["level"] == {"type": "integer"}
    assert r"|fk)$" in made["properties"]["file"]["pattern"]
    assert {"required": ["level"]} in made["allOf"][-1]["then"]["not"]["anyOf"]
    assert "| `.fk` | llvm-cpu | `wrapped` | fakes it |" in schema.markdown()


def test_the_schema_is_draft_2020_12():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_schema_knows_the_fields_targets_kinds_and_modes_manifest_py_does():
    definitions = SCHEMA["$defs"]
    assert set(definitions["model"]["properties"]) == MODEL_KEYS
    assert set(definitions["substitution"]["properties"]) == substitution_keys()
    assert definitions["target"]["enum"] == list(TARGETS)
    assert definitions["substitution"]["properties"]["mode"]["enum"] == list(MODES)
    kinds = re.search(r"\\\.\((.*)\)\$$", definitions["substitution"]["properties"]["file"]
                      ["pattern"]).group(1).split("|")
    assert sorted("." + k for k in kinds) == sorted(KERNEL_KINDS)
    assert definitions["model"]["properties"]["source"]["pattern"].endswith(
        r"\.(" + "|".join(s.lstrip(".") for s in manifest.MODEL_SUFFIXES) + ")$")
    assert SCHEMA["properties"]["models"]["propertyNames"]["pattern"] == manifest.NAME_RE.pattern


def test_a_good_manifest_passes_both(repo):
    assert schema_errors(GOOD) == []
    assert len(load(repo, GOOD).substitutions) == 4


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_manifest_fails_both(repo, name):
    text = BAD[name]
    assert schema_errors(text), f"the schema accepts it:\n{text}"
    with pytest.raises(UserError):
        load(repo, text)


@pytest.mark.parametrize("path", sorted(p.relative_to(REPO).as_posix()
                                        for p in (REPO / "kernels").rglob("*.toml")))
def test_every_manifest_in_the_repo_is_valid(path):
    assert schema_errors((REPO / path).read_text()) == []


DOCUMENTS = ["README.md", *sorted(p.relative_to(REPO).as_posix()
                                  for p in (REPO / "docs").glob("*.md"))]


def documented_manifests(document: str) -> list[str]:
    """A document's TOML examples that are manifests (not expected-outputs files)."""
    blocks = re.findall(r"^```toml\n(.*?)^```", (REPO / document).read_text(), re.M | re.S)
    return [b for b in blocks if set(tomllib.loads(b)) & {"models", "substitutions"}]


@pytest.mark.parametrize("document, text", [(d, t) for d in DOCUMENTS
                                            for t in documented_manifests(d)])
def test_every_manifest_example_in_the_readme_and_docs_is_valid(document, text):
    assert schema_errors(text) == []


def test_the_docs_show_the_manifest_examples_and_name_the_schema():
    assert len(documented_manifests("README.md")) == 1                  # the minimal manifest
    assert len(documented_manifests("docs/manifest.md")) >= 3
    assert sum(len(documented_manifests(d)) for d in DOCUMENTS) >= 8
    for document in ("README.md", "docs/manifest.md"):
        assert "site_scons/iree_kernels/data/manifest.schema.json" in (REPO / document).read_text()
    taplo = tomllib.loads((REPO / ".taplo.toml").read_text())
    rule = next(r for r in taplo["rule"] if r["schema"]["path"].endswith("manifest.schema.json"))
    assert (REPO / rule["schema"]["path"]).resolve() == SCHEMA_FILE
