"""Kernel manifests: TOML files in a repo saying which kernel replaces which executable.

A manifest declares models (``[models.NAME]``) and substitutions
(``[[substitutions]]``); a project is all manifests of a repo read together.
This module turns them into typed records and rejects anything malformed with
an error naming the file, line, entry and field. It does not look inside
models or kernels: that is ``executables`` and the per-language checks.
"""
from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field, replace as _replace
from functools import lru_cache
from pathlib import Path, PurePosixPath

from iree_kernels.project.tolerances import TOLERANCE_KEYS, Tolerance, tolerance_error
from iree_kernels.core.errors import UserError, control_character, shown
from iree_kernels.core import toml_files
from iree_kernels.core.files import not_regular, read_text
from iree_kernels.ir.workgroups import ExpressionError, count_region
from iree_kernels.ir.targets import DEFAULT_TARGETS, TARGETS
from iree_kernels.kinds.registry import KERNEL_KINDS, MODES, kernel_kind

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")
# Paths travel through SCons and into flag files; '$', quotes, ';' and the
# like are refused rather than escaped.
PATH_RE = re.compile(r"^[\w .+,@=/-]+$")

MODEL_KEYS = {"source", "targets", "options", "expected", "opset"}
MODEL_SUFFIXES = (".mlir", ".mlirbc", ".onnx", ".pt2")
# Sources the build imports to MLIR first: ONNX models and torch.export programs.
IMPORTED_SUFFIXES = (".onnx", ".pt2")
# The ONNX opset an .onnx source is converted to before it is imported (when
# the model's own is older): 17 is what IREE's ONNX tests import at.
DEFAULT_OPSET = 17
# A Triton kernel's (.py) compile options; arch: the CUDA architecture it is compiled for.
TRITON_KEYS = ("constexprs", "num_warps", "num_stages", "arch")
SUBSTITUTION_KEYS = {"model", "target", "executable", "export", "fingerprint", "file", "mode",
                     "workgroup_count", "workgroup_size", "function", "verify", "from",
                     "passes", *TRITON_KEYS, *TOLERANCE_KEYS}
# A kernel derived by iree-opt from the executable's own dumped source (``passes``).
DERIVED_KEYS = {"model", "target", "executable", "export", "fingerprint", "passes", "verify",
                *TOLERANCE_KEYS}
# A folder of kernels (``from``): what applies to every kernel in it.
FOLDER_KEYS = {"model", "target", "from", "mode", "verify", *TOLERANCE_KEYS}
# Files a folder of kernels may hold beside its kernels: headers and notes.
FOLDER_SKIPPED_SUFFIXES = (".h", ".hpp", ".cuh", ".inc", ".md", ".txt")
# IREE's dump names a source <module>_<executable>; its -from= flags strip the prefix too.
DUMP_PREFIX = "module_"
SELECTOR_KEYS = ("executable", "export", "fingerprint")
FINGERPRINT_RE = re.compile(r"^sha256:[0-9a-f]{12,64}$")
WRAPPED_KEYS = ("workgroup_count", "workgroup_size", "function")
C_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Origin:
    """Where a record was written: for error messages."""
    file: str
    line: int | None
    entry: str
    field_lines: dict[str, int] = field(default_factory=dict, compare=False)

    def error(self, message: str, field: str | None = None) -> UserError:
        line = self.field_lines.get(field, self.line) if field else self.line
        return UserError(message, file=self.file, line=line, entry=self.entry, field=field)


@dataclass(frozen=True)
class Model:
    name: str
    source: str                       # repo-relative, POSIX separators
    targets: tuple[str, ...]
    options: dict[str, tuple[str, ...]]
    expected: str | None
    origin: Origin
    opset: int | None = None          # .onnx sources: the opset they are imported at
    expected_file: str = ""           # where its expected outputs are, or would be by default

    @property
    def imported(self) -> bool:
        """Whether the source is imported (.onnx, .pt2) before iree-compile reads it."""
        return self.source.endswith(IMPORTED_SUFFIXES)


@dataclass(frozen=True)
class Substitution:
    model: str
    target: str
    executable: str
    file: str                         # repo-relative, POSIX separators
    mode: str
    origin: Origin
    workgroup_count: tuple = ()       # wrapped mode: expressions of the workload
    workgroup_size: tuple = ()        # wrapped mode on GPUs
    function: str = ""                # wrapped mode on llvm-cpu: the C function
    export: str = ""                  # selector: a glob over export names
    fingerprint: str = ""             # selector (or, with executable, a check): "sha256:<hex>"
    objects: tuple = ()               # an MLIR kernel: the files it links (repo-relative)
    object_search_path: str = ""      # the kernel's folder, where it links files by paths
                                      # relative to it (--iree-hal-executable-object-search-path)
    atol: float | None = None         # the differential check's tolerance (None: the default)
    rtol: float | None = None
    ulp: int | None = None
    bitwise: bool | None = None       # True: outputs equal bit for bit, NaN payloads too
    verify: bool = True               # False: it computes something else on purpose
    constexprs: tuple = ()            # a Triton kernel: ((name, value), ...) of its tl.constexprs
    num_warps: int = 0                # a Triton kernel: 0 is Triton's default (4)
    num_stages: int = 0               # a Triton kernel: 0 is Triton's default
    arch: str = ""                    # a Triton kernel on cuda: compiled for it, not CUDA_ARCH
    folder: str = ""                  # from a folder of kernels (``from``): the folder; then
                                      # executable is the file's stem, DUMP_PREFIX optional
    passes: tuple = ()                # a derived kernel: the iree-opt pipelines, in order; file
                                      # is then '' and passes_file the file they are in, if any
    passes_file: str = ""

    @property
    def tolerance(self) -> Tolerance:
        return Tolerance(self.atol, self.rtol, self.ulp, bool(self.bitwise))

    @property
    def key(self) -> str:
        """What the substitution is known by before its executable is found: stable across renumbering.

        The executable's name where the manifest gives one, else the selector.
        """
        if self.executable:
            return self.executable
        return " ".join(f"{k}={v}" for k, v in (("export", self.export),
                                                ("fingerprint", self.fingerprint)) if v)

    def selector(self) -> dict:
        """The manifest's selector fields that are set."""
        return {k: getattr(self, k) for k in SELECTOR_KEYS if getattr(self, k)}

    def as_record(self) -> dict:
        return {"model": self.model, "target": self.target,
                "executable": self.executable, "file": self.file,
                "mode": self.mode, "manifest": self.origin.file,
                "selector": self.selector(), "objects": list(self.objects),
                **({"passes": list(self.passes), "passes_file": self.passes_file}
                   if self.passes else {})}

    def to_dict(self) -> dict:
        o = self.origin
        return {"model": self.model, "target": self.target, "executable": self.executable,
                "export": self.export, "fingerprint": self.fingerprint,
                "file": self.file, "mode": self.mode,
                "origin": {"file": o.file, "line": o.line, "entry": o.entry,
                           "field_lines": dict(o.field_lines)},
                "workgroup_count": tuple(self.workgroup_count),
                "workgroup_size": tuple(self.workgroup_size), "function": self.function,
                "objects": tuple(self.objects), "object_search_path": self.object_search_path,
                "atol": self.atol, "rtol": self.rtol, "ulp": self.ulp, "bitwise": self.bitwise,
                "verify": self.verify, "constexprs": [list(c) for c in self.constexprs],
                "num_warps": self.num_warps, "num_stages": self.num_stages, "arch": self.arch,
                "folder": self.folder, "passes": list(self.passes),
                "passes_file": self.passes_file}

    @classmethod
    def from_dict(cls, data: dict) -> "Substitution":
        return cls(**{**data, "origin": Origin(**data["origin"]),
                      "constexprs": tuple(tuple(c) for c in data.get("constexprs", ())),
                      "passes": tuple(data.get("passes", ()))})


@dataclass
class Project:
    root: Path
    build_dir: str = "build"          # repo-relative: nothing read from a manifest may lie in it
    manifests: list[str] = field(default_factory=list)
    models: dict[str, Model] = field(default_factory=dict)
    substitutions: list[Substitution] = field(default_factory=list)

    def substitutions_for(self, model: str, target: str) -> list[Substitution]:
        return [s for s in self.substitutions
                if s.model == model and s.target == target]


def closest(name: str, known) -> str:
    """' (did you mean X?)' for the nearest known name, or ''."""
    match = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean '{match[0]}'?)" if match else ""


def load_project(root: str | Path, manifest_paths, build_dir: str = "build") -> Project:
    """Read the manifests; ``build_dir`` (repo-relative) is where the build writes."""
    root = Path(root).resolve()
    project = Project(root=root, build_dir=PurePosixPath(build_dir).as_posix().rstrip("/"))
    for path in sorted(Path(p) for p in manifest_paths):
        _load_manifest(project, path)
    for sub in project.substitutions:
        _check_references(project, sub)
    _check_duplicates(project)
    _check_object_search_paths(project)
    _check_outputs(project)
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
                        file=rel, line=_line_of_key(text, key))
    models = data.get("models", {})
    if not isinstance(models, dict):
        raise UserError("'models' must be a table of [models.NAME] entries", file=rel)
    for name, entry in models.items():
        origin = Origin(rel, _model_header_lines(text).get(name),
                        f"models.{name}")
        if name in project.models:
            raise origin.error(f"model '{name}' is already declared in "
                               f"{project.models[name].origin.file}")
        project.models[name] = _model(project, name, entry, origin, text)
    subs = data.get("substitutions", [])
    if not isinstance(subs, list):
        raise UserError("'substitutions' must be an array of [[substitutions]] entries", file=rel)
    for index, entry in enumerate(subs):
        line = _line_of_header(text, r"\[substitutions\]", index)
        origin = Origin(rel, line, f"[[substitutions]] #{index + 1}",
                        _field_lines(text, line, entry))
        if isinstance(entry, dict) and "from" in entry:
            project.substitutions.extend(_folder_substitutions(project, entry, origin, text))
        else:
            project.substitutions.append(_substitution(project, entry, origin, text))


def _model(project: Project, name: str, entry, origin: Origin, text: str) -> Model:
    if not NAME_RE.fullmatch(name):
        raise origin.error("model names may use letters, digits, '_', '.' and '-' only")
    if not isinstance(entry, dict):
        raise origin.error("a model must be a table")
    _check_keys(entry, MODEL_KEYS, origin, text)
    source = _path_field(project, entry, "source", origin, text, required=True,
                         suffixes=MODEL_SUFFIXES)
    opset = _opset(entry, source, origin, text)
    targets = entry.get("targets", list(DEFAULT_TARGETS))
    if not isinstance(targets, list) or not all(isinstance(t, str) for t in targets):
        raise _field_error(origin, text, "targets", "must be a list of target names")
    for t in targets:
        if t not in TARGETS:
            raise _field_error(origin, text, "targets", f"unknown target '{t}'{closest(t, TARGETS)}; "
                               f"known targets: {', '.join(TARGETS)}")
    options = entry.get("options", {})
    if not isinstance(options, dict):
        raise _field_error(origin, text, "options", "must be a table of TARGET = [flags]")
    for t, flags in options.items():
        if t not in targets:
            raise _field_error(origin, text, "options", f"options for target '{t}', which this "
                               f"model is not built for (targets: {', '.join(targets)})")
        if not isinstance(flags, list) or not all(isinstance(f, str) and f.startswith("-") for f in flags):
            raise _field_error(origin, text, "options", f"options.{t} must be a list of "
                               "iree-compile flags, each starting with '-'")
        for flag in flags:
            bad = control_character(flag)
            if bad:
                raise _field_error(origin, text, "options", f"options.{t}: flag "
                                   f"'{shown(flag)}' contains the control character {bad!r}")
    expected = _path_field(project, entry, "expected", origin, text, suffixes=(".toml",))
    default = Path(source).with_suffix(".expected.toml").as_posix()
    if expected is None:
        if os.path.lexists(project.root / default):
            try:
                expected = repo_path(project.root, default, project.build_dir)
            except ValueError as e:
                raise _field_error(origin, text, "source", f"its expected outputs: {e}") from None
    lines = {key: _line_of_field(text, origin.line, key) for key in entry}
    origin = Origin(origin.file, origin.line, origin.entry,
                    {key: line for key, line in lines.items() if line is not None})
    return Model(name, source, tuple(targets),
                 {t: tuple(f) for t, f in options.items()}, expected, origin, opset,
                 expected or default)


def _opset(entry: dict, source: str, origin: Origin, text: str) -> int | None:
    """The opset an .onnx source is imported at; None for other sources."""
    if not source.endswith(".onnx"):
        if "opset" in entry:
            raise _field_error(origin, text, "opset", f"only an .onnx source takes 'opset' "
                               f"(this model's source is {source})")
        return None
    opset = entry.get("opset", DEFAULT_OPSET)
    if type(opset) is not int or not 1 <= opset <= 1000:
        raise _field_error(origin, text, "opset", f"must be an ONNX opset version, a positive "
                           f"integer such as {DEFAULT_OPSET} (the default), not {opset!r}")
    return opset


def _substitution(project: Project, entry, origin: Origin, text: str) -> Substitution:
    if not isinstance(entry, dict):
        raise origin.error("a substitution must be a table")
    _check_keys(entry, SUBSTITUTION_KEYS, origin, text)
    values = {}
    for key in ("model", "target", *SELECTOR_KEYS):
        value = entry.get(key)
        if value is None:
            if key in ("model", "target"):
                raise origin.error("missing required field", key)
            values[key] = ""
            continue
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
            raise _field_error(origin, text, key, "must be a non-empty string without spaces")
        if control_character(value):
            raise _field_error(origin, text, key, f"'{shown(value)}' contains the control "
                               f"character {control_character(value)!r}")
        values[key] = value
    _check_selector(values, origin, text)
    selector = next(k for k in SELECTOR_KEYS if values[k])
    described = Origin(origin.file, origin.line, f"{origin.entry} ({selector} "
                       f"'{values[selector]}' of {values['model']}/{values['target']})",
                       origin.field_lines)
    if "passes" in entry:
        return _derived(project, entry, values, described, text)
    file = _path_field(project, entry, "file", described, text, required=True)
    kind = kernel_kind(file)
    if kind is None:
        raise _field_error(described, text, "file", f"'{file}' is not a kernel file this tool "
                           f"knows ({', '.join(KERNEL_KINDS)})")
    mode = entry.get("mode", kind.default_mode)
    if mode not in MODES:
        raise _field_error(described, text, "mode", f"unknown mode '{mode}'{closest(str(mode), MODES)}; "
                           f"modes: {', '.join(MODES)}")
    if mode not in kind.modes:
        raise _field_error(described, text, "mode", f"{kind.description} cannot be substituted in "
                           f"{mode} mode: {kind.why_not}")
    if values["target"] not in kind.targets:
        raise _field_error(described, text, "file", f"{kind.description} cannot replace an executable "
                           f"of target '{values['target']}'; it fits {', '.join(kind.targets)}")
    objects, search_path = _check_object_paths(project, file, described, text) \
        if file.endswith(".mlir") else ((), "")
    launch = _launch_fields(entry, mode, values["target"], file, described, text)
    triton = _triton_fields(entry, file, values["target"], described, text)
    for key in TOLERANCE_KEYS:
        if problem := tolerance_error(key, entry.get(key)):
            raise _field_error(described, text, key, problem)
    if not isinstance(entry.get("verify", True), bool):
        raise _field_error(described, text, "verify", "must be true or false (false: the kernel "
                           "computes something else on purpose; no differential check)")
    return Substitution(values["model"], values["target"], values["executable"],
                        file, mode, described, export=values["export"],
                        fingerprint=values["fingerprint"].lower(), objects=objects,
                        object_search_path=search_path, **launch, **triton,
                        verify=entry.get("verify", True),
                        **{key: entry.get(key) for key in TOLERANCE_KEYS})


PIPELINE_RE = re.compile(r"^[A-Za-z_][\w.-]*\(.*\)$", re.S)


def _derived(project: Project, entry: dict, values: dict, origin: Origin,
             text: str) -> Substitution:
    """A kernel the build derives: the executable's dumped source run through iree-opt pipelines.

    ``passes`` is one pipeline (``builtin.module(...)``) or a file of them, one
    a line (``#`` starts a comment), run in order.
    """
    for key in entry:
        if key not in DERIVED_KEYS:
            raise UserError(f"field '{key}' does not go with 'passes' (a kernel derived from "
                            f"the executable's own source); a derived kernel takes "
                            f"{', '.join(sorted(DERIVED_KEYS))}", file=origin.file,
                            line=_line_of_field(text, origin.line, key), entry=origin.entry)
    value = entry["passes"]
    if not isinstance(value, str) or not value.strip():
        raise _field_error(origin, text, "passes", "must be an iree-opt pass pipeline "
                           "(\"builtin.module(...)\") or a file of them, one a line")
    passes_file = ""
    if "(" in value:
        pipelines = [value.strip()]
    else:
        passes_file = _path_field(project, entry, "passes", origin, text)
        try:
            lines = read_text(project.root / passes_file).splitlines()
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise _field_error(origin, text, "passes", f"cannot read {passes_file}: "
                               f"{getattr(e, 'strerror', None) or e}") from None
        pipelines = [line.strip() for line in lines
                     if line.strip() and not line.strip().startswith("#")]
        if not pipelines:
            raise _field_error(origin, text, "passes", f"{passes_file} holds no pipeline "
                               "(one a line, such as builtin.module(...); '#' starts a comment)")
    for pipeline in pipelines:
        where = f"{passes_file}: " if passes_file else ""
        bad = control_character(pipeline)
        if bad or not PIPELINE_RE.fullmatch(pipeline):
            raise _field_error(origin, text, "passes", f"{where}'{shown(pipeline)}' is not a "
                               "pass pipeline: expected an anchor and its passes, such as "
                               "builtin.module(hal.executable(hal.executable.variant("
                               "builtin.module(func.func(canonicalize,cse)))))")
    for key in TOLERANCE_KEYS:
        if problem := tolerance_error(key, entry.get(key)):
            raise _field_error(origin, text, key, problem)
    if not isinstance(entry.get("verify", True), bool):
        raise _field_error(origin, text, "verify", "must be true or false")
    return Substitution(values["model"], values["target"], values["executable"], "", "source",
                        origin, export=values["export"],
                        fingerprint=values["fingerprint"].lower(), verify=entry.get("verify", True),
                        passes=tuple(pipelines), passes_file=passes_file,
                        **{key: entry.get(key) for key in TOLERANCE_KEYS})


def _folder_substitutions(project: Project, entry: dict, origin: Origin,
                          text: str) -> list[Substitution]:
    """A folder of kernels (``from``): one substitution per kernel file, named after its executable.

    Read when the manifests are: a file added or removed changes the project's
    substitutions as an entry added or removed would, and nothing else.
    """
    for key in entry:
        if key not in FOLDER_KEYS:
            why = ("the folder's files name the executables" if key in SELECTOR_KEYS or
                   key == "file" else "give a kernel that needs it an entry of its own")
            raise UserError(f"field '{key}' does not go with 'from' (a folder of kernels): "
                            f"{why}; a folder entry takes {', '.join(sorted(FOLDER_KEYS))}",
                            file=origin.file, line=_line_of_field(text, origin.line, key),
                            entry=origin.entry)
    folder = _folder_field(project, entry, origin, text)
    names = []
    try:
        listing = sorted(os.scandir(project.root / folder), key=lambda e: e.name)
    except OSError as e:
        raise _field_error(origin, text, "from", f"cannot list {folder}/: {e.strerror}") from None
    for item in listing:
        if item.name.startswith(".") or item.is_dir() or \
                item.name.endswith(FOLDER_SKIPPED_SUFFIXES):
            continue
        names.append(item.name)
    target = entry.get("target")
    fits = sorted(k.suffix for k in KERNEL_KINDS.values()
                  if target in k.targets and "wrapped" != k.default_mode)
    if not names:
        raise _field_error(origin, text, "from", f"{folder}/ holds no kernels: put in it files "
                           f"named after the model's executables, as scons dump names them "
                           f"(NAME{' or NAME'.join(fits) if fits else '.mlir'})")
    subs = []
    for name in names:
        file = f"{folder}/{name}"
        kind = kernel_kind(name)
        stem = name[:-len(kind.suffix)] if kind else ""
        if kind is None or not stem:
            raise _field_error(origin, text, "from", f"{file} is not a kernel file (its name "
                               f"is an executable's and a kernel suffix: "
                               f"{', '.join(fits) or ', '.join(KERNEL_KINDS)}); move it out "
                               f"or name it so")
        if kind.default_mode == "wrapped":
            raise _field_error(origin, text, "from", f"{file}: {kind.description} is "
                               "substituted wrapped, with a launch shape (workgroup_count) a "
                               "folder cannot give; give it an entry of its own")
        single = {key: value for key, value in entry.items() if key != "from"}
        single.update(executable=stem, file=file)
        lines = dict(origin.field_lines, executable=origin.field_lines.get("from", origin.line),
                     file=origin.field_lines.get("from", origin.line))
        described = Origin(origin.file, origin.line, f"{origin.entry} ({file})", lines)
        sub = _substitution(project, single, described, text)
        subs.append(_replace(sub, folder=folder))
    return subs


def _folder_field(project: Project, entry: dict, origin: Origin, text: str) -> str:
    """``from``: a folder in the repository (not the build folder), repo-relative, no '/' at the end."""
    value = entry.get("from")
    if not isinstance(value, str) or not value.strip("/"):
        raise _field_error(origin, text, "from", "must be a folder (a path, relative to the "
                           "repository root)")
    value = value.rstrip("/")
    problem = ""
    if not PATH_RE.fullmatch(value):
        bad = next((c for c in value if not PATH_RE.fullmatch(c)), value[-1:])
        problem = (f"path '{shown(value)}' contains {bad!r}; paths may use letters, digits, "
                   "spaces and . _ + , @ = / - only")
    elif value.startswith("/"):
        problem = f"'{value}' is absolute; write it relative to the repository root"
    else:
        resolved = _resolve(project.root, value)
        if not resolved.is_relative_to(project.root):
            problem = f"'{value}' is outside the repository"
        elif resolved.is_relative_to(project.root / project.build_dir):
            problem = (f"'{value}' is inside the build folder ({project.build_dir}/), which "
                       "holds what the build makes; keep sources outside it")
        elif not resolved.is_dir():
            problem = (f"folder not found: {value}" if not resolved.exists()
                       else f"'{value}' is not a folder (a single kernel goes in 'file')")
    if problem:
        raise _field_error(origin, text, "from", problem)
    return resolved.relative_to(project.root).as_posix()


def _check_selector(values: dict, origin: Origin, text: str) -> None:
    """One of executable, export, fingerprint; fingerprint may go with either of the others."""
    if not any(values[k] for k in SELECTOR_KEYS):
        raise origin.error("missing the executable to replace: give executable = \"NAME\", "
                           "export = \"PATTERN\" (a glob over export names) or fingerprint = "
                           "\"sha256:HEX\" (from scons dump)", "executable")
    if values["executable"] and values["export"]:
        raise _field_error(origin, text, "export", "give executable or export, not both "
                           "(a fingerprint may go with either)")
    fingerprint = values["fingerprint"].lower()
    if fingerprint and not FINGERPRINT_RE.match(fingerprint):
        raise _field_error(origin, text, "fingerprint", f"'{values['fingerprint']}' is not a "
                           "fingerprint: expected 'sha256:' and 12 to 64 hex digits, as "
                           "scons dump lists them")


def _launch_fields(entry: dict, mode: str, target: str, file: str, origin: Origin,
                   text: str) -> dict:
    """workgroup_count, workgroup_size and function of a wrapped substitution."""
    if mode != "wrapped":
        for key in WRAPPED_KEYS:
            if key in entry:
                raise _field_error(origin, text, key, f"only a wrapped substitution takes "
                                   f"'{key}' (this one is in {mode} mode)")
        return {}
    if "workgroup_count" not in entry:
        raise origin.error("a wrapped substitution needs a workgroup_count: 1 to 3 "
                           "expressions of the workload (w0, w1, ...) and integers",
                           "workgroup_count")
    count = entry["workgroup_count"]
    try:
        count_region(count, None)
    except ExpressionError as e:
        raise _field_error(origin, text, "workgroup_count", str(e))
    size = entry.get("workgroup_size")
    if file.endswith(".py"):
        if size is not None:
            raise _field_error(origin, text, "workgroup_size", "a Triton kernel's workgroup "
                               "size is num_warps x the warp size (Triton's metadata gives it); "
                               "set num_warps instead")
        return {"workgroup_count": tuple(count),
                "function": _function(entry, file, origin, text, "Python function")}
    if target == "llvm-cpu":
        if size is not None:
            raise _field_error(origin, text, "workgroup_size", "llvm-cpu runs one invocation "
                               "per workgroup; workgroup_size applies to GPU targets only")
        return {"workgroup_count": tuple(count),
                "function": _function(entry, file, origin, text, "C function")}
    if "function" in entry:
        raise _field_error(origin, text, "function", "only a C kernel on llvm-cpu or a Triton "
                           "kernel (.py) takes 'function'; a GPU kernel's entry is the "
                           "export's name")
    if (not isinstance(size, list) or not 1 <= len(size) <= 3
            or not all(type(n) is int and n > 0 for n in size)):
        raise _field_error(origin, text, "workgroup_size", "a wrapped GPU kernel needs "
                           "workgroup_size = [x] or [x, y] or [x, y, z], positive integers "
                           "(threads per workgroup)")
    return {"workgroup_count": tuple(count), "workgroup_size": tuple(size)}


def _function(entry: dict, file: str, origin: Origin, text: str, what: str) -> str:
    function = entry.get("function", PurePosixPath(file).stem)
    if not isinstance(function, str) or not C_NAME_RE.fullmatch(function):
        raise _field_error(origin, text, "function", f"'{shown(function)}' is not a {what} "
                           "name; set function = \"name\" (default: the file's stem)")
    return function


CUDA_ARCH_RE = re.compile(r"^sm_\d+a?$")


def _triton_fields(entry: dict, file: str, target: str, origin: Origin, text: str) -> dict:
    """constexprs, num_warps, num_stages and arch of a Triton kernel (.py)."""
    if not file.endswith(".py"):
        for key in TRITON_KEYS:
            if key in entry:
                raise _field_error(origin, text, key, f"only a Triton kernel (.py) takes '{key}'")
        return {}
    found = {}
    constexprs = entry.get("constexprs", {})
    if not isinstance(constexprs, dict):
        raise _field_error(origin, text, "constexprs", "must be a table of NAME = value "
                           "(the function's tl.constexpr parameters)")
    for name, value in constexprs.items():
        if not C_NAME_RE.fullmatch(name) or type(value) not in (int, float, bool):
            raise _field_error(origin, text, "constexprs", f"'{shown(name)}' = {value!r}: a "
                               "tl.constexpr value is an integer, a float or a boolean, named "
                               "like a Python parameter")
    found["constexprs"] = tuple(sorted(constexprs.items()))
    for key, low, high in (("num_warps", 1, 32), ("num_stages", 1, 16)):
        value = entry.get(key, 0)
        if key in entry and (type(value) is not int or not low <= value <= high
                             or key == "num_warps" and value & (value - 1)):
            kind = "a power of two" if key == "num_warps" else "an integer"
            raise _field_error(origin, text, key, f"must be {kind} from {low} to {high}, not "
                               f"{value!r}")
        found[key] = value
    arch = entry.get("arch", "")
    if "arch" in entry and (target != "cuda" or not isinstance(arch, str)
                            or not CUDA_ARCH_RE.fullmatch(arch)):
        raise _field_error(origin, text, "arch", "a CUDA architecture such as \"sm_90a\", on "
                           "the cuda target only: the Triton kernel is compiled for it instead "
                           "of CUDA_ARCH, and the module then runs only on that GPU")
    found["arch"] = arch
    return found


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


def _check_keys(entry: dict, allowed: set[str], origin: Origin, text: str) -> None:
    for key in entry:
        if key not in allowed:
            raise UserError(f"unknown field '{key}'{closest(key, allowed)}; allowed fields: "
                            f"{', '.join(sorted(allowed))}", file=origin.file,
                            line=_line_of_field(text, origin.line, key), entry=origin.entry)


def _path_field(project: Project, entry: dict, key: str, origin: Origin, text: str,
                required: bool = False, suffixes: tuple[str, ...] = ()) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise origin.error("missing required field", key)
        return None
    if not isinstance(value, str) or not value:
        raise _field_error(origin, text, key, "must be a path (a string)")
    try:
        return repo_path(project.root, value, project.build_dir, suffixes)
    except ValueError as e:
        raise _field_error(origin, text, key, str(e)) from None


def repo_path(root: Path, value: str, build_dir: str = "build",
              suffixes: tuple[str, ...] = ()) -> str:
    """``value``, a path a user wrote, as a repo-relative path to a regular file in the repo.

    ValueError says why not: characters SCons or a flag file would take as
    syntax, absolute, outside the repository (links resolved), inside the
    build folder, a wrong suffix, missing, a folder or FIFO.
    """
    if not PATH_RE.fullmatch(value):
        bad = next((c for c in value if not PATH_RE.fullmatch(c)), value[-1:])
        hint = (" (a kernel named after an executable with '$' is named with '_' for it: "
                "main_async_dispatch_3.mlir for main$async_dispatch_3)" if bad == "$" else "")
        raise ValueError(f"path '{shown(value)}' contains {bad!r}; paths may use "
                         f"letters, digits, spaces and . _ + , @ = / - only{hint}")
    if value.startswith("/"):
        raise ValueError(f"'{value}' is absolute; write it relative to the repository root")
    resolved = _resolve(root, value)
    if not resolved.is_relative_to(root):
        raise ValueError(f"'{value}' is outside the repository")
    if resolved.is_relative_to(root / build_dir):
        raise ValueError(f"'{value}' is inside the build folder ({build_dir}/), "
                         "which holds what the build makes; keep sources outside it")
    if suffixes and not value.endswith(suffixes):
        raise ValueError(f"'{value}' should end in {_one_of(suffixes)}")
    why = not_regular(resolved)
    if why == "not found":
        raise ValueError(f"file not found: {value}")
    if why:
        raise ValueError(f"'{value}' is {why}, not a regular file")
    return resolved.relative_to(root).as_posix()


_OBJECT_PATH_RE = re.compile(r"#hal\.executable\.object<\{[^}]*?path\s*=\s*\"([^\"]*)\"")
# An object read from its file; one whose data is embedded (a codegen cache stand-in) reads none.
_LINKED_FILE_RE = re.compile(r"#hal\.executable\.object<\{(?:(?!data\s*=)[^}])*?path\s*=\s*\"([^\"]+)\""
                             r"(?:(?!data\s*=)[^}])*\}>")


def object_paths(mlir: str) -> list[str]:
    """The files MLIR links as objects (``#hal.executable.object<{path = ...}>``), in order."""
    return list(dict.fromkeys(m.group(1) for m in _LINKED_FILE_RE.finditer(mlir)))


def _check_object_paths(project: Project, file: str, origin: Origin,
                        text: str) -> tuple[tuple[str, ...], str]:
    """Every ``#hal.executable.object<{path = ...}>`` in an MLIR kernel names a file in the repo.

    A path is looked up as iree-compile looks it up: relative to the
    repository root (the build's working folder), then to the kernel's own
    folder (``--iree-hal-executable-object-search-path``). Returns the files
    the kernel links (repo-relative) and the kernel's folder where one was
    found there, else ''.
    """
    try:
        kernel = read_text(project.root / file)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise _field_error(origin, text, "file", f"cannot read {file}: "
                           f"{getattr(e, 'strerror', None) or e}") from None
    folder = PurePosixPath(file).parent.as_posix()
    linked = set(object_paths(kernel))
    found, searched = [], ""
    for m in _OBJECT_PATH_RE.finditer(kernel):
        value = m.group(1)
        beside = f"{folder}/{value}"
        # iree-compile takes the path from its working folder where it is there, else it
        # searches; one leading out of the repository or into the build folder is refused.
        from_root = folder == "." or value.startswith("/") or not PATH_RE.fullmatch(value) \
            or os.path.lexists(project.root / value) or not _inside(project, value)
        try:
            path = repo_path(project.root, value if from_root else beside, project.build_dir)
        except ValueError as e:
            line = kernel.count("\n", 0, m.start()) + 1
            problem = str(e) if from_root else (
                str(e).replace(beside, value) + f" (looked for in the repository root and in "
                f"{folder}/)" if "file not found" in str(e) else f"'{value}' (in {folder}/): {e}")
            raise _field_error(origin, text, "file", f"{file}:{line}: the "
                               f"#hal.executable.object path: {problem}") from None
        searched = searched or ("" if from_root else folder)
        if value in linked:
            found.append(path)
    return tuple(dict.fromkeys(found)), searched


def _inside(project: Project, value: str) -> bool:
    """Whether ``value``, from the repository root, stays in it and out of the build folder."""
    resolved = _resolve(project.root, value)
    return resolved.is_relative_to(project.root) and \
        not resolved.is_relative_to(project.root / project.build_dir)


def _check_object_search_paths(project: Project) -> None:
    """Kernels of one module linking objects by the same relative name from different folders:
    iree-compile would find one file for both (its search paths are per compile)."""
    by_module: dict[tuple, list[Substitution]] = {}
    for sub in project.substitutions:
        if sub.object_search_path:
            by_module.setdefault((sub.model, sub.target), []).append(sub)
    for subs in by_module.values():
        folders = sorted({s.object_search_path for s in subs})
        for sub in subs:
            for path in sub.objects:
                if not path.startswith(sub.object_search_path + "/"):
                    continue
                name = path[len(sub.object_search_path) + 1:]
                for other in folders:
                    if other != sub.object_search_path and \
                            (project.root / other / name).exists():
                        raise sub.origin.error(
                            f"{sub.file} links '{name}' from its folder, and {other}/{name} "
                            f"exists too: iree-compile searches every kernel folder of "
                            f"{sub.model}/{sub.target} and could take either; write the path "
                            f"from the repository root ('{path}')", "file")


def _one_of(words) -> str:
    """'a', 'a or b', 'a, b or c'."""
    return " or ".join(filter(None, [", ".join(words[:-1]), words[-1]]))


def _resolve(root: Path, value: str) -> Path:
    """``root / value`` with symbolic links resolved; each folder is resolved once."""
    parent, name = os.path.split(value)
    path = os.path.join(_resolved_dir(str(root), parent), name)
    return Path(os.path.realpath(path) if os.path.islink(path) or name in ("", ".", "..") else path)


@lru_cache(maxsize=None)
def _resolved_dir(root: str, parent: str) -> str:
    return os.path.realpath(os.path.join(root, parent))


def _field_error(origin: Origin, text: str, key: str, message: str) -> UserError:
    return UserError(message, file=origin.file, line=_line_of_field(text, origin.line, key),
                     entry=origin.entry, field=key)


def _relative(root: Path, path: Path) -> str:
    """``path`` as the user sees it: repo-relative where it lies in the repo (links not followed)."""
    try:
        return Path(os.path.abspath(path)).relative_to(root).as_posix()
    except ValueError:
        return str(path)


def _check_outputs(project: Project) -> None:
    """No two models or kernels write the same path, or a file where another writes a folder."""
    build = project.build_dir
    files: dict[str, tuple[str, Origin]] = {}
    folders: dict[str, tuple[str, Origin]] = {}
    for model in project.models.values():
        owner = (f"model '{model.name}'", model.origin)
        for target in model.targets:
            files.setdefault(f"{build}/{target}/{model.name}.vmfb", owner)
            files.setdefault(f"{build}/{target}/{model.name}.check", owner)
            folders.setdefault(f"{build}/{target}/{model.name}", owner)
    for sub in project.substitutions:
        kind = kernel_kind(sub.file)
        if kind is not None and kind.compiles_to and not kind.per_substitution:
            made = PurePosixPath(build, sub.file).with_suffix(kind.compiles_to).as_posix()
            files.setdefault(made, (f"kernel {sub.file}", sub.origin))
    for path, owner in sorted(files.items()):
        for parent in PurePosixPath(path).parents:
            folders.setdefault(parent.as_posix(), owner)
    for path, (who, origin) in sorted(files.items()):
        if path in folders and folders[path][0] != who:
            other, where = folders[path]
            raise origin.error(f"{who} and {other} ({where.file}:{where.line}) would both write "
                               f"{path}: a file for {who}, a folder for {other}; rename one")


# tomllib reports no positions for values, so lines are found in the text:
# the nth header of an entry, then the first line of a field below it.

def _line_of_header(text: str, pattern: str, nth: int) -> int | None:
    found = _header_lines(text, pattern)
    return found[nth] if nth < len(found) else None


@lru_cache(maxsize=16)
def _header_lines(text: str, pattern: str) -> tuple[int, ...]:
    header = re.compile(rf"^[ \t]*\[[ \t]*{pattern}[ \t]*\]")
    return tuple(n for n, line in enumerate(_lines(text), 1) if header.match(line))


@lru_cache(maxsize=4)
def _lines(text: str) -> tuple[str, ...]:
    return tuple(text.splitlines())


_MODEL_HEADER_RE = re.compile(r'^[ \t]*\[[ \t]*models\.("?)([^"\]\s]+)\1[ \t]*\]')


@lru_cache(maxsize=4)
def _model_header_lines(text: str) -> dict[str, int]:
    found = {}
    for n, line in enumerate(_lines(text), 1):
        m = _MODEL_HEADER_RE.match(line)
        if m:
            found.setdefault(m.group(2), n)
    return found


def _line_of_field(text: str, start: int | None, key: str) -> int | None:
    """The line of ``key`` in the entry starting at ``start``: ``key = ``, ``key.x = `` or a
    ``[...key]`` sub-table of the entry."""
    lines = _lines(text)
    header = _lines(text)[start - 1].strip() if start and start <= len(lines) else ""
    table = re.match(r"^\[\s*([^\[\]]*?)\s*\]$", header)
    for number in range((start or 1), len(lines) + 1):
        line = lines[number - 1].strip()
        if number > (start or 1) and line.startswith("["):
            if table and re.match(rf"^\[\s*{re.escape(table.group(1))}\s*\.\s*\"?"
                                  rf"{re.escape(key)}\"?\s*[\].]", line):
                return number
            if not (table and line.startswith(f"[{table.group(1)}.")):
                break
            continue
        if re.match(rf"^\"?{re.escape(key)}\"?\s*(=|\.)", line):
            return number
    return start


def _field_lines(text: str, start: int | None, entry) -> dict[str, int]:
    if not isinstance(entry, dict):
        return {}
    lines = _lines(text)
    found = {}
    for number in range((start or 1), len(lines) + 1):
        line = lines[number - 1].strip()
        if number > (start or 1) and line.startswith("["):
            break
        m = _KEY_RE.match(line)
        if m and m.group(1) in entry:
            found.setdefault(m.group(1), number)
    return {key: found.get(key, start) for key in entry if found.get(key, start) is not None}


_KEY_RE = re.compile(r'^"?([A-Za-z0-9_-]+)"?\s*=')


def _line_of_key(text: str, key: str) -> int | None:
    for number, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[*\s*\"?{re.escape(key)}\b", line):
            return number
    return None

