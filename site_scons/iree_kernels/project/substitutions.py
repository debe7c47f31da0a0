"""A manifest's ``[[substitutions]]`` entries, read into records: one kernel, a folder of kernels
(``from``) or a kernel derived from the executable's own source (``passes``).

Each field is checked here, with an error naming the file, line, entry and
field. Not for the models (``manifest``), nor for what the kernel holds:
that is the kinds' checks, once the executable is known.
"""
from __future__ import annotations

import os
import re
from dataclasses import replace as _replace
from pathlib import PurePosixPath

from iree_kernels.core.errors import UserError, closest, control_character, shown
from iree_kernels.core.files import read_text
from iree_kernels.core.toml_lines import line_of_field
from iree_kernels.ir.workgroups import SIZE_NAMES, ExpressionError, count_region, with_sizes
from iree_kernels.kinds.registry import KERNEL_KINDS, MODES, KernelKind, kernel_kind, kind_fields
from iree_kernels.project.compiler_flags import refused_pipeline
from iree_kernels.project.fields import check_keys, field_error, path_field
from iree_kernels.project.kernel_objects import check_object_paths
from iree_kernels.project.records import SELECTOR_KEYS, Origin, Project, Substitution
from iree_kernels.core.files import not_regular
from iree_kernels.project.repo_paths import located, repo_folder
from iree_kernels.project.timings import KEEP_VALUES
from iree_kernels.project.tolerances import TOLERANCE_KEYS, tolerance_error

# The fields every substitution may take; each kind adds its own (substitution_keys).
COMMON_KEYS = {"model", "target", "executable", "export", "fingerprint", "file", "mode",
               "workgroup_count", "workgroup_size", "function", "verify", "from",
               "passes", "match", "keep", "timings", *TOLERANCE_KEYS}
# A kernel derived by iree-opt from the executable's own dumped source (``passes``).
DERIVED_KEYS = {"model", "target", "executable", "export", "fingerprint", "passes", "verify",
                *TOLERANCE_KEYS}
# A folder of kernels (``from``): what applies to every kernel in it.
FOLDER_KEYS = {"model", "target", "from", "mode", "verify", *TOLERANCE_KEYS}
# Files a folder of kernels may hold beside its kernels: headers and notes.
FOLDER_SKIPPED_SUFFIXES = (".h", ".hpp", ".cuh", ".inc", ".md", ".txt")
FINGERPRINT_RE = re.compile(r"^sha256:[0-9a-f]{12,64}$")
WRAPPED_KEYS = ("workgroup_count", "workgroup_size", "function")
C_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def read_substitution(project: Project, entry, origin: Origin, text: str,
                      dump_name: bool = False) -> Substitution:
    """One entry. ``dump_name``: its file may have a name IREE's dump gives (a folder's)."""
    if not isinstance(entry, dict):
        raise origin.error("a substitution must be a table")
    check_keys(entry, substitution_keys(), origin, text)
    values = {}
    for key in ("model", "target", *SELECTOR_KEYS):
        value = entry.get(key)
        if value is None:
            if key in ("model", "target"):
                raise origin.error("missing required field", key)
            values[key] = ""
            continue
        if not isinstance(value, str) or not value.strip() or any(c.isspace() for c in value):
            raise field_error(origin, text, key, "must be a non-empty string without spaces")
        if control_character(value):
            raise field_error(origin, text, key, f"'{shown(value)}' contains the control "
                              f"character {control_character(value)!r}")
        values[key] = value
    _check_selector(values, origin, text)
    selector = next(k for k in SELECTOR_KEYS if values[k])
    described = Origin(origin.file, origin.line, f"{origin.entry} ({selector} "
                       f"'{values[selector]}' of {values['model']}/{values['target']})",
                       origin.field_lines)
    if "passes" in entry:
        return _derived(project, entry, values, described, text)
    file = path_field(project, entry, "file", described, text, required=True,
                      dump_name=dump_name)
    kind = kernel_kind(file)
    if kind is None:
        raise field_error(described, text, "file", f"'{file}' is not a kernel file this tool "
                          f"knows ({', '.join(KERNEL_KINDS)})")
    mode = entry.get("mode", kind.default_mode)
    keep = {}
    if values["match"]:
        _check_family(entry, kind, mode, described, text)
        keep = _keep_fields(project, entry, described, text)
    else:
        for key in ("keep", "timings"):
            if key in entry:
                raise field_error(described, text, key, f"only a family (match) takes '{key}'")
    if mode not in MODES:
        raise field_error(described, text, "mode", f"unknown mode '{mode}'{closest(str(mode), MODES)}; "
                          f"modes: {', '.join(MODES)}")
    if mode not in kind.modes:
        raise field_error(described, text, "mode", f"{kind.description} cannot be substituted in "
                          f"{mode} mode: {kind.why_not}")
    if values["target"] not in kind.targets:
        raise field_error(described, text, "file", f"{kind.description} cannot replace an executable "
                          f"of target '{values['target']}'; it fits {', '.join(kind.targets)}")
    objects, search_path = check_object_paths(project, file, described, text) \
        if kind.links_objects else ((), "")
    launch = _launch_fields(entry, mode, values["target"], file, kind, described, text,
                            sizes=bool(values["match"]))
    own = _kind_fields(entry, kind, values["target"], described, text)
    for key in TOLERANCE_KEYS:
        if problem := tolerance_error(key, entry.get(key)):
            raise field_error(described, text, key, problem)
    if not isinstance(entry.get("verify", True), bool):
        raise field_error(described, text, "verify", "must be true or false (false: the kernel "
                          "computes something else on purpose; no differential check)")
    return Substitution(values["model"], values["target"], values["executable"],
                        file, mode, described, export=values["export"],
                        fingerprint=values["fingerprint"].lower(), objects=objects,
                        object_search_path=search_path, **launch, kind_fields=own,
                        match=values["match"], **keep,
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
                            line=line_of_field(text, origin.line, key), entry=origin.entry)
    value = entry["passes"]
    if not isinstance(value, str) or not value.strip():
        raise field_error(origin, text, "passes", "must be an iree-opt pass pipeline "
                          "(\"builtin.module(...)\") or a file of them, one a line")
    passes_file = ""
    if "(" in value:
        pipelines = [value.strip()]
    else:
        passes_file = path_field(project, entry, "passes", origin, text)
        try:
            lines = read_text(project.root / passes_file).splitlines()
        except (OSError, ValueError, UnicodeDecodeError) as e:
            raise field_error(origin, text, "passes", f"cannot read {passes_file}: "
                              f"{getattr(e, 'strerror', None) or e}") from None
        pipelines = [line.strip() for line in lines
                     if line.strip() and not line.strip().startswith("#")]
        if not pipelines:
            raise field_error(origin, text, "passes", f"{passes_file} holds no pipeline "
                              "(one a line, such as builtin.module(...); '#' starts a comment)")
    for pipeline in pipelines:
        where = f"{passes_file}: " if passes_file else ""
        bad = control_character(pipeline)
        if bad or not PIPELINE_RE.fullmatch(pipeline):
            raise field_error(origin, text, "passes", f"{where}'{shown(pipeline)}' is not a "
                              "pass pipeline: expected an anchor and its passes, such as "
                              "builtin.module(hal.executable(hal.executable.variant("
                              "builtin.module(func.func(canonicalize,cse)))))")
        refused = refused_pipeline(pipeline)
        if refused:
            raise field_error(origin, text, "passes", f"{where}the pipeline {refused}")
    for key in TOLERANCE_KEYS:
        if problem := tolerance_error(key, entry.get(key)):
            raise field_error(origin, text, key, problem)
    if not isinstance(entry.get("verify", True), bool):
        raise field_error(origin, text, "verify", "must be true or false")
    return Substitution(values["model"], values["target"], values["executable"], "", "source",
                        origin, export=values["export"],
                        fingerprint=values["fingerprint"].lower(), verify=entry.get("verify", True),
                        passes=tuple(pipelines), passes_file=passes_file,
                        **{key: entry.get(key) for key in TOLERANCE_KEYS})


def read_folder(project: Project, entry: dict, origin: Origin,
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
                            file=origin.file, line=line_of_field(text, origin.line, key),
                            entry=origin.entry)
    folder = _folder_field(project, entry, origin, text)
    names = []
    try:
        listing = sorted(os.scandir(project.root / folder), key=lambda e: e.name)
    except OSError as e:
        raise field_error(origin, text, "from", f"cannot list {folder}/: {e.strerror}") from None
    for item in listing:
        try:
            skipped = item.name.startswith(".") or item.is_dir() or \
                item.name.endswith(FOLDER_SKIPPED_SUFFIXES)
        except OSError as e:            # a link to itself, two links to each other
            raise field_error(origin, text, "from", f"{folder}/{item.name}: "
                              f"{e.strerror.lower()}") from None
        if not skipped:
            names.append(item.name)
    target = entry.get("target")
    fits = sorted(k.suffix for k in KERNEL_KINDS.values()
                  if target in k.targets and "wrapped" != k.default_mode)
    if not names:
        raise field_error(origin, text, "from", f"{folder}/ holds no kernels: put in it files "
                          f"named after the model's executables, as scons dump names them "
                          f"(NAME{' or NAME'.join(fits) if fits else '.mlir'})")
    subs = []
    for name in names:
        file = f"{folder}/{name}"
        kind = kernel_kind(name)
        stem = name[:-len(kind.suffix)] if kind else ""
        if kind is None or not stem:
            raise field_error(origin, text, "from", f"{file} is not a kernel file (its name "
                              f"is an executable's and a kernel suffix: "
                              f"{', '.join(fits) or ', '.join(KERNEL_KINDS)}); move it out "
                              f"or name it so")
        if kind.default_mode == "wrapped":
            raise field_error(origin, text, "from", f"{file}: {kind.description} is "
                              "substituted wrapped, with a launch shape (workgroup_count) a "
                              "folder cannot give; give it an entry of its own")
        single = {key: value for key, value in entry.items() if key != "from"}
        single.update(executable=stem, file=file)
        lines = dict(origin.field_lines, executable=origin.field_lines.get("from", origin.line),
                     file=origin.field_lines.get("from", origin.line))
        described = Origin(origin.file, origin.line, f"{origin.entry} ({file})", lines)
        sub = read_substitution(project, single, described, text, dump_name=True)
        subs.append(_replace(sub, folder=folder))
    return subs


def _folder_field(project: Project, entry: dict, origin: Origin, text: str) -> str:
    """``from``: a folder in the repository (not the build folder), repo-relative, no '/' at the end."""
    value = entry.get("from")
    if not isinstance(value, str) or not value.strip("/"):
        raise field_error(origin, text, "from", "must be a folder (a path, relative to the "
                          "repository root)")
    try:
        return repo_folder(project.root, value.rstrip("/"), project.build_dir)
    except ValueError as e:
        raise field_error(origin, text, "from", str(e)) from None


def _check_selector(values: dict, origin: Origin, text: str) -> None:
    """One of executable, export, fingerprint; fingerprint may go with either of the others."""
    if not any(values[k] for k in SELECTOR_KEYS):
        raise origin.error("missing the executable to replace: give executable = \"NAME\", "
                           "export = \"PATTERN\" (a glob over export names), fingerprint = "
                           "\"sha256:HEX\" (from scons dump) or, for a family of GEMM "
                           "executables, match = \"PATTERN\"", "executable")
    if values["match"] and any(values[k] for k in SELECTOR_KEYS if k != "match"):
        other = next(k for k in SELECTOR_KEYS if k != "match" and values[k])
        raise field_error(origin, text, other, f"give match (a family: every GEMM executable "
                          f"whose export name matches) or {other}, not both")
    if values["executable"] and values["export"]:
        raise field_error(origin, text, "export", "give executable or export, not both "
                          "(a fingerprint may go with either)")
    fingerprint = values["fingerprint"].lower()
    if fingerprint and not FINGERPRINT_RE.match(fingerprint):
        raise field_error(origin, text, "fingerprint", f"'{values['fingerprint']}' is not a "
                          "fingerprint: expected 'sha256:' and 12 to 64 hex digits, as "
                          "scons dump lists them")


def _check_family(entry: dict, kind: KernelKind, mode: str, origin: Origin, text: str) -> None:
    """A family entry (``match``): a kernel of a kind that reads the facts, wrapped."""
    if not kind.family:
        takers = ", ".join(k.suffix for k in KERNEL_KINDS.values() if k.family)
        raise field_error(origin, text, "match", f"{kind.description} cannot be a family "
                          f"(match): only kernels that read an executable's facts can ({takers})")
    if "passes" in entry or "from" in entry:
        raise field_error(origin, text, "match", "a family (match) takes a kernel file")
    if mode != "wrapped":
        raise field_error(origin, text, "mode", "a family (match) is substituted wrapped: its "
                          "kernel launches as workgroup_count says, over the sizes batch, m, "
                          "n, k of each executable it takes")


def _keep_fields(project: Project, entry: dict, origin: Origin, text: str) -> dict:
    """keep ("all" or "faster") and, with "faster", the timings file that decides."""
    keep = entry.get("keep", "all")
    if keep not in KEEP_VALUES:
        raise field_error(origin, text, "keep", f"must be one of {', '.join(KEEP_VALUES)} "
                          "(faster: only instances a device measured faster than IREE's)")
    if keep == "faster" and "timings" not in entry:
        raise field_error(origin, text, "keep", "keep = \"faster\" needs timings = \"FILE\": "
                          "where scons timings on the device records its figures (checked in)")
    if "timings" in entry and keep != "faster":
        raise field_error(origin, text, "timings", "only keep = \"faster\" reads timings")
    if keep != "faster":
        return {}
    value = entry["timings"]
    try:
        if not isinstance(value, str) or not value.endswith(".json"):
            raise ValueError("must be the path of a .json file, relative to the repository")
        resolved = located(project.root, value, project.build_dir)   # it may not exist yet
        why = not_regular(resolved)
        if why and why != "not found":
            raise ValueError(f"'{value}' is {why}, not a regular file")
    except ValueError as e:
        raise field_error(origin, text, "timings", str(e)) from None
    return {"keep": keep, "timings": resolved.relative_to(project.root).as_posix()}


def _launch_fields(entry: dict, mode: str, target: str, file: str, kind: KernelKind,
                   origin: Origin, text: str, sizes: bool = False) -> dict:
    """workgroup_count, workgroup_size and function of a wrapped substitution; ``sizes``: of a
    family, whose counts may name each executable's loop sizes (workgroups.SIZE_NAMES)."""
    if mode != "wrapped":
        for key in WRAPPED_KEYS:
            if key in entry:
                raise field_error(origin, text, key, f"only a wrapped substitution takes "
                                  f"'{key}' (this one is in {mode} mode)")
        return {}
    if "workgroup_count" not in entry:
        raise origin.error("a wrapped substitution needs a workgroup_count: 1 to 3 "
                           "expressions of the workload (w0, w1, ...) and integers",
                           "workgroup_count")
    count = entry["workgroup_count"]
    try:
        count_region([with_sizes(e, dict.fromkeys(SIZE_NAMES, 1)) for e in count]
                     if sizes and isinstance(count, list) and count else count, None)
    except ExpressionError as e:
        raise field_error(origin, text, "workgroup_count", str(e))
    size = entry.get("workgroup_size")
    if kind.no_workgroup_size:     # it launches with a workgroup size of its own
        if size is not None:
            raise field_error(origin, text, "workgroup_size", kind.no_workgroup_size)
        return {"workgroup_count": tuple(count),
                "function": _function(entry, file, origin, text, kind.function[0])}
    if target == "llvm-cpu":
        if size is not None:
            raise field_error(origin, text, "workgroup_size", "llvm-cpu runs one invocation "
                              "per workgroup; workgroup_size applies to GPU targets only")
        return {"workgroup_count": tuple(count),
                "function": _function(entry, file, origin, text, "C function")}
    if "function" in entry:
        takers = ["a C kernel on llvm-cpu", *dict.fromkeys(
            k.function[1] for k in KERNEL_KINDS.values() if k.function)]
        raise field_error(origin, text, "function", f"only {' or '.join(takers)} takes "
                          "'function'; a GPU kernel's entry is the export's name")
    if (not isinstance(size, list) or not 1 <= len(size) <= 3
            or not all(type(n) is int and n > 0 for n in size)):
        raise field_error(origin, text, "workgroup_size", "a wrapped GPU kernel needs "
                          "workgroup_size = [x] or [x, y] or [x, y, z], positive integers "
                          "(threads per workgroup)")
    return {"workgroup_count": tuple(count), "workgroup_size": tuple(size)}


def _function(entry: dict, file: str, origin: Origin, text: str, what: str) -> str:
    function = entry.get("function", PurePosixPath(file).stem)
    if not isinstance(function, str) or not C_NAME_RE.fullmatch(function):
        raise field_error(origin, text, "function", f"'{shown(function)}' is not a {what} "
                          "name; set function = \"name\" (default: the file's stem)")
    return function


def substitution_keys() -> set[str]:
    """The fields a [[substitutions]] entry may have: the common ones and every kind's own."""
    return COMMON_KEYS | set(kind_fields())


def _kind_fields(entry: dict, kind: KernelKind, target: str, origin: Origin, text: str) -> dict:
    """The fields of ``kind``'s own (KernelKind.read_fields); another kind's are refused."""
    for key, owner in kind_fields().items():
        if owner is not kind and key in entry and key not in {f.name for f in kind.fields}:
            raise field_error(origin, text, key, f"only {owner.description} ({owner.suffix}) "
                              f"takes '{key}'")
    if kind.read_fields is None:
        return {}
    return kind.read_fields(entry, target,
                            lambda key, message: field_error(origin, text, key, message))
