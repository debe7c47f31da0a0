"""Triton kernels: a ``@triton.jit`` function in a ``.py`` file, compiled for one executable.

Target cuda (to PTX) or hip (to a code object); wrapped mode only. A Triton
kernel's signature is the executable's layout, so it is compiled once per
substitution (``declare``), with the manifest's ``constexprs``, ``num_warps``,
``num_stages`` and, on cuda, ``arch`` (``read_fields``); the wrapper launches it
with the workgroup size Triton's metadata gives. This is the kind: its data
and hooks. Not for the compile step (``triton_kernels``, its compiler half,
run by the Python that has Triton) nor for the builders (``site_tools/triton_compile.py``).
"""
from __future__ import annotations

import re

from iree_kernels.core.errors import shown
from iree_kernels.kinds.base import KernelKind, KindField, Scaffold
from iree_kernels.kinds import triton_family

LANGUAGE = "triton"
BLOCK = 1024      # a Triton skeleton's BLOCK: elements a program takes at a time
_C_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_CUDA_ARCH_RE = re.compile(r"^sm_\d+a?$")
_IDENTIFIER = "^[A-Za-z_][A-Za-z0-9_]*$"
_WARPS = (1, 2, 4, 8, 16, 32)

# A Triton kernel's (.py) compile options; arch: the CUDA architecture it is compiled for.
FIELDS = (
    KindField("constexprs", {
        "type": "object",
        "description": "Triton kernels: the values of the function's tl.constexpr parameters",
        "propertyNames": {"pattern": _IDENTIFIER},
        "additionalProperties": {"type": ["integer", "number", "boolean"]}}),
    KindField("num_warps", {
        "enum": list(_WARPS),
        "description": "Triton kernels: warps per workgroup (default 4); the workgroup size "
                       "is num_warps x the warp size"}),
    KindField("num_stages", {
        "type": "integer", "minimum": 1, "maximum": 16,
        "description": "Triton kernels: software-pipelining stages (default: Triton's)"}),
    KindField("arch", {
        "type": "string", "pattern": _CUDA_ARCH_RE.pattern,
        "description": "Triton kernels on cuda: the architecture it is compiled for instead "
                       "of CUDA_ARCH (e.g. sm_90a); the module then runs only there"}),
)


def read_fields(entry: dict, target: str, error) -> dict:
    """constexprs, num_warps, num_stages and arch of a Triton kernel (.py)."""
    found = {}
    constexprs = entry.get("constexprs", {})
    if not isinstance(constexprs, dict):
        raise error("constexprs", "must be a table of NAME = value "
                    "(the function's tl.constexpr parameters)")
    for name, value in constexprs.items():
        if not _C_NAME_RE.fullmatch(name) or type(value) not in (int, float, bool):
            raise error("constexprs", f"'{shown(name)}' = {value!r}: a "
                        "tl.constexpr value is an integer, a float or a boolean, named "
                        "like a Python parameter")
    found["constexprs"] = dict(sorted(constexprs.items()))
    for key, low, high in (("num_warps", 1, 32), ("num_stages", 1, 16)):
        value = entry.get(key, 0)
        if key in entry and (type(value) is not int or not low <= value <= high
                             or key == "num_warps" and value & (value - 1)):
            kind = "a power of two" if key == "num_warps" else "an integer"
            raise error(key, f"must be {kind} from {low} to {high}, not {value!r}")
        found[key] = value
    arch = entry.get("arch", "")
    if "arch" in entry and (target != "cuda" or not isinstance(arch, str)
                            or not _CUDA_ARCH_RE.fullmatch(arch)):
        raise error("arch", "a CUDA architecture such as \"sm_90a\", on "
                    "the cuda target only: the Triton kernel is compiled for it instead "
                    "of CUDA_ARCH, and the module then runs only on that GPU")
    found["arch"] = arch
    return found


def check_overrides(sub) -> dict:
    """A Triton kernel may be compiled for another architecture than the module's (arch)."""
    arch = sub.kind_fields.get("arch", "")
    return {"CUDA_ARCH": arch} if arch else {}


def declare(env, sub, *, source, built, named, spec, listing, resolved, arch) -> list:
    """The interface (what the executable's layout makes of the signature), then the compile
    with the Triton tool's own builders: [the kernel, Triton's metadata]."""
    interface = env.TritonInterface(named(".interface.json"), [spec, listing, resolved])
    family = source if sub.facts else None
    if family:          # a family's instance: compiled through its executable's entry
        source = env.TritonFamilyEntry(named(".entry.py"), spec)[0]
    made = env.Triton([built, built.target_from_source("", built.get_suffix() + ".json")],
                      [source, *interface], TRITON_ARCH=sub.kind_fields["arch"] or arch)
    if family:
        env.Depends(made, family)         # the entry imports it when Triton compiles
    return made


def _skeleton_values(outputs: str) -> dict:
    return {"block": BLOCK, "blocks": -(-int(outputs) // BLOCK) if outputs.isdigit() else 0}


KINDS = (
    KernelKind(".py", "a Triton kernel", ("cuda", "hip"), "wrapped", ("wrapped",),
               "a Triton kernel launches with its own workgroup size (num_warps): it is "
               "linked by a generated wrapper (wrapped mode)", ".ptx", tool="triton_compile",
               compiles_for=(("hip", ".hsaco"),), declare=declare, family=True,
               family_decline=triton_family.decline,
               function=("Python function", "a Triton kernel (.py)"),
               no_workgroup_size="a Triton kernel's workgroup size is num_warps x the warp "
                                 "size (Triton's metadata gives it); set num_warps instead",
               fields=FIELDS, read_fields=read_fields, check_overrides=check_overrides,
               scaffold=Scaffold(LANGUAGE, ("cuda", "hip"), "scaffold/kernel.py.j2", "wrapped",
                                 comment="#", default_for=("hip",),
                                 entry_template="scaffold/entry.py.j2",
                                 values=_skeleton_values),
               short_lines=(("TRITONCOMSTR", "TRITON   $TARGET"),
                            ("TRITON_INTERFACECOMSTR", "ABI      $TARGET"),
                            ("TRITON_FAMILYENTRYCOMSTR", "ENTRYPY  $TARGET")),
               schema_comment="a Triton kernel: target cuda or hip, wrapped mode; the "
                              "workgroup size comes from num_warps",
               doc="compiles its `@triton.jit` function with Triton to PTX or a code "
                   "object, once per substitution, checks it, links it through a generated "
                   "wrapper"),
)
