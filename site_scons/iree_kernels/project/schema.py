"""What the kernel kinds and the manifest's fields make for users: the manifest's JSON Schema
(``data/manifest.schema.json``, for editors) and the docs' table of kernel suffixes
(``docs/manifest.md``), generated so that a kind added or changed changes them.

``python -m iree_kernels.project.schema --json`` (or ``--markdown``) prints one;
tests/unit/test_manifest_schema.py fails where the files are stale. Not for
reading manifests (``manifest``, ``substitutions``): the schema says less than they check.
"""
from __future__ import annotations

import argparse
import json
import sys

from iree_kernels.ir.targets import TARGETS
from iree_kernels.kinds.registry import KERNEL_KINDS, MODES, KernelKind
from iree_kernels.project.manifest import DEFAULT_OPSET, MODEL_SUFFIXES, NAME_RE

SCHEMA_FILE = "site_scons/iree_kernels/data/manifest.schema.json"
TABLE_START = "<!-- the kernel kinds' table: generated, python -m iree_kernels.project.schema --markdown -->"
TABLE_END = "<!-- end of the kernel kinds' table -->"
# A path relative to the repository root (project.repo_paths.PATH_RE, not absolute).
_PATH = r"^[\w .+,@=-][\w .+,@=/-]*"
_NAME = r"^[^\s\u0000-\u001f\u007f-\u009f]+$"
_IDENTIFIER = "^[A-Za-z_][A-Za-z0-9_]*$"
_TOLERANCE = ("the differential check's tolerance (docs/workflows.md, \"Differential "
              "checks\"); 0: exact")
_LAUNCH = ("workgroup_count", "workgroup_size", "function")


def _alternatives(suffixes) -> str:
    names = [s.lstrip(".") for s in suffixes]
    return names[0] if len(names) == 1 else "(" + "|".join(names) + ")"


def _file_is(suffixes) -> dict:
    return {"properties": {"file": {"pattern": rf"\.{_alternatives(suffixes)}$"}},
            "required": ["file"]}


def _none_of(keys) -> dict:
    return {"not": {"anyOf": [{"required": [key]} for key in keys]}}


def _own_fields() -> list[str]:
    return list(dict.fromkeys(own.name for kind in KERNEL_KINDS.values() for own in kind.fields))


def _languages() -> list[list[KernelKind]]:
    """The kinds grouped by their schema comment (a language's kinds share one), in order."""
    groups: dict[str, list[KernelKind]] = {}
    for kind in KERNEL_KINDS.values():
        groups.setdefault(kind.schema_comment or kind.description, []).append(kind)
    return list(groups.values())


def _model() -> dict:
    options = [{"if": {"properties": {"options": {"required": [t]}}, "required": ["options"]},
                "then": {"properties": {"targets": {"contains": {"const": t}}}}}
               for t in TARGETS]
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["source"],
        "properties": {
            "source": {"type": "string",
                       "description": "the model, relative to the repository root",
                       "pattern": rf"{_PATH}\.{_alternatives(MODEL_SUFFIXES)}$"},
            "targets": {"type": "array", "description": "default: every target",
                        "items": {"$ref": "#/$defs/target"}},
            "options": {"type": "object", "description": "extra iree-compile flags per target",
                        "propertyNames": {"$ref": "#/$defs/target"},
                        "additionalProperties": {"type": "array", "items": {
                            "type": "string",
                            "pattern": r"^-[^\u0000-\u001f\u007f-\u009f]*$"}}},
            "expected": {"type": "string", "description": "expected outputs for scons check",
                         "pattern": rf"{_PATH}\.toml$"},
            "opset": {"type": "integer", "minimum": 1, "maximum": 1000,
                      "description": f".onnx sources: the opset imported at (default "
                                     f"{DEFAULT_OPSET})"},
        },
        "allOf": [
            {"if": {"properties": {"source": {"not": {"pattern": r"\.onnx$"}}},
                    "required": ["source"]},
             "then": _none_of(["opset"])},
            *options,
        ],
    }


def _kind_rule(kinds: list[KernelKind]) -> dict:
    """What a language's kernel files go with: modes, targets and the language's own fields."""
    first = kinds[0]
    then: dict = {"properties": {"mode": {"enum": list(first.modes)}}}
    if set(first.targets) != set(TARGETS):
        then["properties"]["target"] = ({"const": first.targets[0]} if len(first.targets) == 1
                                        else {"enum": list(first.targets)})
    rule = {"$comment": first.schema_comment or first.description,
            "if": _file_is([k.suffix for k in kinds]), "then": then}
    if first.no_workgroup_size:
        then["required"] = ["workgroup_count"]
        then.update(_none_of(["workgroup_size"]))
    own = [f.name for f in first.fields]
    if own:
        rule["else"] = _none_of(own)
    return rule


def _wrapped_rule() -> dict:
    wrapped = [k.suffix for k in KERNEL_KINDS.values() if k.default_mode == "wrapped"]
    sized = [k.suffix for k in KERNEL_KINDS.values() if k.no_workgroup_size]
    gpu = {"allOf": [{"required": ["workgroup_size"]}, _none_of(["function"])]}
    if sized:
        gpu = {"if": _file_is(sized), "then": _none_of(["workgroup_size"]), "else": gpu}
    return {
        "$comment": f"wrapped mode (the default of {' '.join(wrapped)}): the launch shape; "
                    "other modes take none",
        "if": {"anyOf": [{"properties": {"mode": {"const": "wrapped"}}, "required": ["mode"]},
                         _file_is(wrapped)]},
        "then": {"required": ["workgroup_count"],
                 "if": {"properties": {"target": {"const": "llvm-cpu"}}},
                 "then": _none_of(["workgroup_size"]),
                 "else": gpu},
        "else": _none_of(_LAUNCH),
    }


def _substitution() -> dict:
    suffixes = list(KERNEL_KINDS)
    by_mode = ", ".join(f"{mode} ({' '.join(k.suffix for k in KERNEL_KINDS.values() if k.default_mode == mode)})"
                        for mode in MODES
                        if any(k.default_mode == mode for k in KERNEL_KINDS.values()))
    takers = [k.function[1] for k in KERNEL_KINDS.values() if k.function]
    properties = {
        "model": {"type": "string", "pattern": _NAME},
        "target": {"$ref": "#/$defs/target"},
        "executable": {"type": "string", "pattern": _NAME,
                       "description": "the hal.executable to replace"},
        "export": {"type": "string", "pattern": _NAME, "description": "a glob over export names"},
        "keep": {"enum": ["all", "faster"],
                 "description": "a family: faster keeps only the instances its timings file "
                                "shows faster than IREE's executables (scons timings)"},
        "timings": {"type": "string", "pattern": rf"{_PATH}\.json$",
                    "description": "a keep = \"faster\" family: the timings file scons "
                                   "timings writes on the device, checked in"},
        "match": {"type": "string", "pattern": _NAME,
                  "description": "a family: a glob over export names; every GEMM executable it "
                                 "matches gets the kernel, compiled with that executable's "
                                 "iree_gemm.h (C and CUDA kernels, wrapped)"},
        "fingerprint": {"type": "string", "pattern": "^[sS][hH][aA]256:[0-9a-fA-F]{12,64}$",
                        "description": "sha256: and 12 to 64 hex digits, as scons dump lists them"},
        "file": {"type": "string", "description": "the kernel, relative to the repository root",
                 "pattern": rf"{_PATH}\.{_alternatives(suffixes)}$"},
        "from": {"type": "string",
                 "description": "a folder of kernels, relative to the repository root: each "
                                "file named after the executable it replaces (as scons dump "
                                "names it, module_ optional)",
                 "pattern": f"{_PATH}$"},
        "passes": {"type": "string", "minLength": 1,
                   "description": "a kernel derived from the executable's own dumped source: "
                                  "an iree-opt pass pipeline (builtin.module(...)), or a file "
                                  "of them, one a line, run in order"},
        "mode": {"enum": list(MODES), "description": f"default: {by_mode}"},
        "workgroup_count": {"type": "array", "minItems": 1, "maxItems": 3,
                            "description": "wrapped: x[, y[, z]], integers or expressions of "
                                           "the workload (w0, w1, ...)",
                            "items": {"anyOf": [{"type": "integer"},
                                                {"type": "string", "minLength": 1}]}},
        "workgroup_size": {"type": "array", "minItems": 1, "maxItems": 3,
                           "description": "wrapped GPU kernels: threads per workgroup",
                           "items": {"type": "integer", "minimum": 1}},
        "function": {"type": "string", "pattern": _IDENTIFIER,
                     "description": "wrapped C kernels" + "".join(
                         f" and {t}" for t in takers) + ": the function (default: the "
                         "file's stem)"},
        **{own.name: dict(own.schema) for kind in KERNEL_KINDS.values() for own in kind.fields},
        "atol": {"type": "number", "minimum": 0, "description": _TOLERANCE},
        "rtol": {"type": "number", "minimum": 0, "description": _TOLERANCE},
        "ulp": {"type": "integer", "minimum": 0, "description": _TOLERANCE},
        "bitwise": {"type": "boolean",
                    "description": "true: the differential check wants outputs equal bit for "
                                   "bit, NaN payloads too (default: a NaN matches any NaN)"},
        "verify": {"type": "boolean",
                   "description": "false: the kernel computes something else on purpose; no "
                                  "differential check"},
    }
    own = _own_fields()
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["model", "target"],
        "properties": properties,
        "oneOf": [{"required": ["file"]}, {"required": ["from"]}, {"required": ["passes"]}],
        "not": {"required": ["executable", "export"]},
        "allOf": [
            *(_kind_rule(kinds) for kinds in _languages()),
            _wrapped_rule(),
            {"$comment": "a folder of kernels (from): its files name the executables; no "
                         "selector, no launch shape, no kind's own fields",
             "if": {"required": ["from"]},
             "then": _none_of(["executable", "export", "fingerprint", *_LAUNCH, *own]),
             "else": {"anyOf": [{"required": [k]} for k in ("executable", "export",
                                                            "fingerprint", "match")]}},
            {"$comment": "a family (match) selects by itself",
             "if": {"required": ["match"]},
             "then": _none_of(["executable", "export", "fingerprint", "from", "passes"]),
             "else": _none_of(["keep", "timings"])},
            {"$comment": "a derived kernel (passes): a selector, no kernel file, source mode, "
                         "no launch shape, no kind's own fields",
             "if": {"required": ["passes"]},
             "then": _none_of(["mode", *_LAUNCH, *own])},
        ],
    }


def schema() -> dict:
    """The manifest's JSON Schema (draft 2020-12)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "iree-kernels manifest",
        "description": "A kernels/**/*.toml manifest of iree-kernels: models and the kernels "
                       "that replace their executables (docs/manifest.md). The build checks "
                       "more than this schema can: that files exist, that substitutions name "
                       "declared models and their targets, workgroup_count's expression "
                       "syntax, duplicates.",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "models": {"type": "object", "description": "[models.NAME] tables",
                       "propertyNames": {"pattern": NAME_RE.pattern},
                       "additionalProperties": {"$ref": "#/$defs/model"}},
            "substitutions": {"type": "array", "description": "[[substitutions]] entries",
                              "items": {"$ref": "#/$defs/substitution"}},
        },
        "$defs": {
            "target": {"enum": list(TARGETS)},
            "model": _model(),
            "substitution": _substitution(),
        },
    }


def schema_json() -> str:
    """``data/manifest.schema.json``'s text."""
    return json.dumps(schema(), indent=2) + "\n"


def markdown() -> str:
    """The docs' table of kernel files by suffix (docs/manifest.md), between its markers."""
    rows: list[tuple[list[str], KernelKind]] = []
    for kind in KERNEL_KINDS.values():
        last = rows[-1][1] if rows else None
        if last and (last.targets, last.default_mode, last.doc) == \
                (kind.targets, kind.default_mode, kind.doc):
            rows[-1][0].append(kind.suffix)
        else:
            rows.append(([kind.suffix], kind))
    lines = [TABLE_START, "| suffix | targets | default mode | the build |", "|---|---|---|---|"]
    for suffixes, kind in rows:
        targets = "all" if set(kind.targets) == set(TARGETS) else ", ".join(kind.targets)
        lines.append(f"| {', '.join(f'`{s}`' for s in suffixes)} | {targets} | "
                     f"`{kind.default_mode}` | {kind.doc} |")
    also = [f"`{k.suffix}`" for k in KERNEL_KINDS.values()
            if "wrapped" in k.modes and k.default_mode != "wrapped"]
    if also:
        lines += ["", f"{', '.join(also[:-1])} and {also[-1]} also take `mode = \"wrapped\"`."
                  if len(also) > 1 else f"{also[0]} also takes `mode = \"wrapped\"`."]
    return "\n".join([*lines, TABLE_END]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--json", action="store_true", help=f"print {SCHEMA_FILE}")
    which.add_argument("--markdown", action="store_true",
                       help="print docs/manifest.md's table of kernel suffixes")
    args = parser.parse_args(argv)
    sys.stdout.write(schema_json() if args.json else markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
