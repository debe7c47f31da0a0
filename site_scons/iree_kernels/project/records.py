"""The records a project's manifests are read into: models, substitutions, where each was written.

Frozen dataclasses the steps pass on (``Substitution.to_dict`` and
``from_dict`` carry one through a SCons Value node). Not for reading or
checking manifests: that is ``manifest`` and ``substitutions``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.project.tolerances import Tolerance

# Sources the build imports to MLIR first: ONNX models and torch.export programs.
IMPORTED_SUFFIXES = (".onnx", ".pt2")
# IREE's dump names a source <module>_<executable>; its -from= flags strip the prefix too.
DUMP_PREFIX = "module_"
SELECTOR_KEYS = ("executable", "export", "fingerprint", "match")


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
    # The kind's own fields (registry.KernelKind.fields), as its read_fields checked them.
    kind_fields: dict = field(default_factory=dict, hash=False)
    folder: str = ""                  # from a folder of kernels (``from``): the folder; then
                                      # executable is the file's stem, DUMP_PREFIX optional
    passes: tuple = ()                # a derived kernel: the iree-opt pipelines, in order; file
                                      # is then '' and passes_file the file they are in, if any
    passes_file: str = ""
    match: str = ""                   # a family: a glob over export names; expanded to one
                                      # instance per GEMM executable it takes (families)
    facts: dict = field(default_factory=dict, hash=False)   # an instance's executable's
                                      # ir.gemm_facts.Contraction, as to_dict gives it
    keep: str = ""                    # a family: "faster" keeps only instances its timings
    timings: str = ""                 # file (repo-relative) shows faster than IREE's

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
                                                ("fingerprint", self.fingerprint),
                                                ("match", self.match)) if v)

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
                "verify": self.verify, "kind_fields": dict(self.kind_fields),
                "folder": self.folder, "passes": list(self.passes),
                "passes_file": self.passes_file, "match": self.match, "facts": self.facts,
                "keep": self.keep, "timings": self.timings}

    @classmethod
    def from_dict(cls, data: dict) -> "Substitution":
        return cls(**{**data, "origin": Origin(**data["origin"]),
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

