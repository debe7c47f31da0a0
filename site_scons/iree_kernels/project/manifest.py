"""Kernel manifests: TOML files in a repo saying which kernel replaces which executable.

A manifest declares models (``[models.NAME]``) and substitutions
(``[[substitutions]]``); a project is all manifests of a repo read together.
This module turns them into typed records and rejects anything malformed with
an error naming the file, line, entry and field. It does not look inside
models or kernels: that is ``executables`` and the per-language checks.
"""
from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from iree_kernels.core import toml_files, toml_lines
from iree_kernels.core.errors import UserError, closest, control_character, shown
from iree_kernels.core.toml_lines import line_of_field
from iree_kernels.ir.targets import DEFAULT_TARGETS, TARGETS
from iree_kernels.project.compiler_flags import refused_flag
from iree_kernels.project.fields import check_keys, field_error, path_field
from iree_kernels.project.kernel_objects import check_object_search_paths
from iree_kernels.project.outputs import check_outputs
from iree_kernels.project.records import SELECTOR_KEYS, Model, Origin, Project, Substitution
from iree_kernels.project.repo_paths import repo_path
from iree_kernels.project.substitutions import read_folder, read_substitution

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

MODEL_KEYS = {"source", "targets", "options", "expected", "opset"}
MODEL_SUFFIXES = (".mlir", ".mlirbc", ".onnx", ".pt2")
# The ONNX opset an .onnx source is converted to before it is imported (when
# the model's own is older): 17 is what IREE's ONNX tests import at.
DEFAULT_OPSET = 17


def load_project(root: str | Path, manifest_paths, build_dir: str = "build") -> Project:
    """Read the manifests; ``build_dir`` (repo-relative) is where the build writes."""
    root = Path(root).resolve()
    project = Project(root=root, build_dir=PurePosixPath(build_dir).as_posix().rstrip("/"))
    for path in sorted(Path(p) for p in manifest_paths):
        _load_manifest(project, path)
    for sub in project.substitutions:
        _check_references(project, sub)
    _check_duplicates(project)
    check_object_search_paths(project)
    check_outputs(project)
    return project


def _load_manifest(project: Project, path: Path) -> None:
    rel = _relative(project.root, path)
    text = toml_files.text_of(path, rel, "manifest")
    if not path.resolve().is_relative_to(project.root):
        where = f"is a link to {path.resolve()}" if path.is_symlink() else "lies"
        raise UserError(f"the manifest {where}, outside the repository", file=rel)
    data = toml_files.parse(text, rel)
    project.manifests.append(rel)
    unknown = set(data) - {"models", "substitutions"}
    for key in sorted(unknown):
        raise UserError(f"unknown top-level key '{key}'; a manifest has "
                        "[models.NAME] tables and [[substitutions]] entries"
                        + closest(key, ["models", "substitutions"]),
                        file=rel, line=toml_lines.line_of_key(text, key))
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise UserError("'models' must be a table of [models.NAME] entries", file=rel)
    for name, entry in models.items():
        origin = Origin(rel, toml_lines.model_header_lines(text).get(name),
                        f"models.{name}")
        if name in project.models:
            raise origin.error(f"model '{name}' is already declared in "
                               f"{project.models[name].origin.file}")
        project.models[name] = _model(project, name, entry, origin, text)
    subs = data.get("substitutions", [])
    if not isinstance(subs, list):
        raise UserError("'substitutions' must be an array of [[substitutions]] entries", file=rel)
    for index, entry in enumerate(subs):
        line = toml_lines.line_of_header(text, r"\[substitutions\]", index)
        origin = Origin(rel, line, f"[[substitutions]] #{index + 1}",
                        toml_lines.field_lines(text, line, entry))
        if isinstance(entry, dict) and "from" in entry:
            project.substitutions.extend(read_folder(project, entry, origin, text))
        else:
            project.substitutions.append(read_substitution(project, entry, origin, text))


def _model(project: Project, name: str, entry, origin: Origin, text: str) -> Model:
    if not NAME_RE.fullmatch(name):
        raise origin.error("model names may use letters, digits, '_', '.' and '-' only")
    if not isinstance(entry, dict):
        raise origin.error("a model must be a table")
    check_keys(entry, MODEL_KEYS, origin, text)
    source = path_field(project, entry, "source", origin, text, required=True,
                        suffixes=MODEL_SUFFIXES)
    opset = _opset(entry, source, origin, text)
    targets = entry.get("targets", list(DEFAULT_TARGETS))
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise field_error(origin, text, "targets", "must be a list of target names")
    if not targets:
        raise field_error(origin, text, "targets", "is empty: the model would be built for no "
                          f"target; name one or more of {', '.join(TARGETS)}, or leave the "
                          "field out for the defaults")
    for t in targets:
        if t not in TARGETS:
            raise field_error(origin, text, "targets", f"unknown target '{t}'{closest(t, TARGETS)}; "
                              f"known targets: {', '.join(TARGETS)}")
    options = entry.get("options", {})
    if not isinstance(options, dict):
        raise field_error(origin, text, "options", "must be a table of TARGET = [flags]")
    for t, flags in options.items():
        if t not in targets:
            raise field_error(origin, text, "options", f"options for target '{t}', which this "
                              f"model is not built for (targets: {', '.join(targets)})")
        if not isinstance(flags, list) or not all(isinstance(f, str) and f.startswith("-") for f in flags):
            raise field_error(origin, text, "options", f"options.{t} must be a list of "
                              "iree-compile flags, each starting with '-'")
        for flag in flags:
            bad = control_character(flag)
            if bad:
                raise field_error(origin, text, "options", f"options.{t}: flag "
                                  f"'{shown(flag)}' contains the control character {bad!r}")
            refused = refused_flag(flag)
            if refused:
                name = flag.partition("=")[0]
                raise field_error(origin, text, "options", f"options.{t}: '{shown(name)}' "
                                  f"{refused}")
    expected = path_field(project, entry, "expected", origin, text, suffixes=(".toml",))
    default = Path(source).with_suffix(".expected.toml").as_posix()
    if expected is None:
        if os.path.lexists(project.root / default):
            try:
                expected = repo_path(project.root, default, project.build_dir)
            except ValueError as e:
                raise field_error(origin, text, "source", f"its expected outputs: {e}") from None
    lines = {key: line_of_field(text, origin.line, key) for key in entry}
    origin = Origin(origin.file, origin.line, origin.entry,
                    {key: line for key, line in lines.items() if line is not None})
    return Model(name, source, tuple(targets),
                 {t: tuple(f) for t, f in options.items()}, expected, origin, opset,
                 expected or default)


def _opset(entry: dict, source: str, origin: Origin, text: str) -> int | None:
    """The opset an .onnx source is imported at; None for other sources."""
    if not source.endswith(".onnx"):
        if "opset" in entry:
            raise field_error(origin, text, "opset", f"only an .onnx source takes 'opset' "
                              f"(this model's source is {source})")
        return None
    opset = entry.get("opset", DEFAULT_OPSET)
    if type(opset) is not int or not 1 <= opset <= 1000:
        raise field_error(origin, text, "opset", f"must be an ONNX opset version, a positive "
                          f"integer such as {DEFAULT_OPSET} (the default), not {opset!r}")
    return opset



def _check_references(project: Project, sub: Substitution) -> None:
    model = project.models.get(sub.model)
    if model is None:
        raise sub.origin.error(f"unknown model '{sub.model}'{closest(sub.model, project.models)}; "
                               f"declared models: {', '.join(sorted(project.models)) or 'none'}",
                               "model")
    if sub.target not in model.targets:
        raise sub.origin.error(f"model '{sub.model}' is not built for target '{sub.target}'"
                               f"{closest(sub.target, model.targets)}; its targets: "
                               f"{', '.join(model.targets)}", "target")


def _check_duplicates(project: Project) -> None:
    seen: dict[tuple, Substitution] = {}
    for sub in project.substitutions:
        key = (sub.model, sub.target, sub.key)
        if key in seen:
            first = seen[key].origin
            what = (f"executable '{sub.executable}'" if sub.executable
                    else f"the executable selected by {sub.key}")
            raise sub.origin.error(f"{what} of {sub.model}/{sub.target} is "
                                   f"already substituted at {first.file}:{first.line} ({first.entry})",
                                   next(k for k in SELECTOR_KEYS if getattr(sub, k)))
        seen[key] = sub



def _relative(root: Path, path: Path) -> str:
    """``path`` as the user sees it: repo-relative where it lies in the repo (links not followed)."""
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return str(path)

