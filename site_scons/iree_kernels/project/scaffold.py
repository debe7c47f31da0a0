"""Kernel skeletons generated from a dumped executable, with their manifest entries.

``scons scaffold SCAFFOLD=model/target/executable LANGUAGE=<a kind's scaffold language>``
(the executable by name, by number or by an export glob: ``select``) writes a kernel that compiles as generated and passes the build's checks: the
entry named after the export, parameters in binding order, push constants, and
comments stating the layout, IREE's launch shape and what to compute (the
dispatch's body, the constants folded into it, the output window:
``dispatch_body``). For ``mlir`` it copies
the dumped source instead. This module renders; it writes no files.
"""
from __future__ import annotations

import fnmatch
import re
import textwrap
from dataclasses import dataclass

from iree_kernels.ir import dispatch_body
from iree_kernels.binaries import ptx_text
from iree_kernels.ir.dump import natural_key, workload_names
from iree_kernels.core.errors import UserError, closest
from iree_kernels.ir.executables import Executable, Subspan
from iree_kernels.core.render import render
from iree_kernels.kinds.registry import KERNEL_KINDS, KernelKind



def languages() -> dict[str, KernelKind]:
    """Each scaffold language -> the kind it writes (``KernelKind.scaffold``): the languages
    that write a skeleton, then those that copy the dumped source."""
    found = [(kind.scaffold.language, kind) for kind in KERNEL_KINDS.values() if kind.scaffold]
    return dict(sorted(found, key=lambda item: item[1].scaffold.template is None))


def target_languages() -> dict[str, str]:
    """The language a target's skeleton is written in where none is asked for."""
    return {target: language for language, kind in languages().items()
            for target in kind.scaffold.default_for}

_C_TYPES = {"f32": "float", "f64": "double", "f16": "uint16_t", "bf16": "uint16_t",
            "i8": "int8_t", "i16": "int16_t", "i32": "int32_t", "i64": "int64_t",
            "i1": "uint8_t"}
_GLSL_TYPES = {"f32": "float", "i32": "int", "ui32": "uint"}


@dataclass(frozen=True)
class Skeleton:
    file: str            # repo-relative path of the kernel
    text: str
    entry: str           # the manifest entry to append


def select(named: str, found: dict[str, Executable], model: str, target: str) -> str:
    """The executable ``SCAFFOLD=model/target/NAMED`` means, of ``found`` (by name).

    ``named`` is an executable's name, its number alone (``3``: the executable
    whose name ends in ``_dispatch_3``) or a glob over export names
    (``*_matmul_*``) that matches one executable.
    """
    if named in found:
        return named
    where = f"SCAFFOLD: model '{model}'"
    if named.isdigit():
        chosen = [n for n in found if n.endswith(f"_dispatch_{int(named)}")]
        if not chosen:
            raise UserError(f"{where} has no executable numbered {named} (named "
                            f"*_dispatch_{int(named)}) for target '{target}'; its executables: "
                            f"{_names(found)}")
    elif any(c in named for c in "*?["):
        chosen = [n for n in found if found[n].exports and
                  fnmatch.fnmatchcase(found[n].export.name, named)]
        if not chosen:
            raise UserError(f"{where} has no executable with an export matching '{named}' for "
                            f"target '{target}'; its executables: {_names(found, exports=True)}")
    else:
        cut = sorted((n for n in found if n.startswith(f"{named}$")), key=natural_key)
        hint = (f"; the shell expands an unquoted '$', so '{named}' may be '{cut[0]}' cut "
                f"short: quote it (SCAFFOLD='{model}/{target}/{cut[0]}') or name the "
                f"executable by its number (SCAFFOLD={model}/{target}/{_number(cut[0])})"
                if cut else closest(named, found))
        raise UserError(f"{where} has no executable '{named}' for target '{target}'{hint}; "
                        f"its executables: {_names(found)}")
    if len(chosen) > 1:
        raise UserError(f"{where}: {len(chosen)} executables match '{named}' for target "
                        f"'{target}': {_names({n: found[n] for n in chosen}, exports=True)}; "
                        "name one")
    return chosen[0]


def _names(found: dict[str, Executable], exports: bool = False) -> str:
    names = sorted(found, key=natural_key)
    if exports:
        names = [f"{n} ({found[n].export.name})" if found[n].exports else n for n in names]
    return ", ".join(names) or "none"


def _number(name: str) -> str:
    match = re.search(r"_dispatch_(\d+)$", name)
    return match.group(1) if match else "NUMBER"


def kernel_path(language: str, model: str, target: str, executable: str) -> str:
    """``kernels/<target>/<model>_<executable>``, the model once where the name starts with it.

    ONNX and torch executables are named after the model's function, which is
    the model's name (``zfnet512$async_dispatch_3``): that one is
    ``zfnet512_async_dispatch_3``, not ``zfnet512_zfnet512_async_dispatch_3``.
    """
    own, bare = (re.sub(r"[^A-Za-z0-9_]", "_", s) for s in (model, executable))
    stem = bare if bare.startswith(f"{own}_") else f"{own}_{bare}"
    return f"kernels/{target}/{stem}{languages()[language].suffix}"


# A wrapped GPU skeleton's launch where IREE's codegen gives none: one workgroup of this many
# invocations, the templates' grid-stride loop covering every output.
WRAPPED_SIZE = 64


def skeleton(language: str, model: str, target: str, source: Executable,
             translated: Executable | None, dumped_source: str = "",
             fingerprint: str = "") -> Skeleton:
    """The kernel for ``language`` replacing ``source`` (untranslated) of ``model``.

    ``translated``: the executable after IREE's codegen, its launch shape; None
    where the codegen fails on it: the skeleton is then wrapped, with a launch
    shape of its own (the kind must take wrapped mode).
    ``fingerprint``: the executable's (``selection``), written beside its name
    in the entry so that a renumbered model is reported, not substituted wrongly.
    """
    known = languages()
    if language not in known:
        raise UserError(f"LANGUAGE: unknown language '{language}'; languages: "
                        f"{', '.join(known)}")
    kind = known[language]
    plan = kind.scaffold
    fits, template, mode = plan.targets, plan.template, plan.mode
    if fits is not None and target not in fits:
        raise UserError(f"LANGUAGE={language} writes kernels for target "
                        f"{' or '.join(repr(f) for f in fits)}, not '{target}'")
    own_launch = translated is None and mode != "wrapped" and template is not None
    if own_launch:
        if "wrapped" not in kind.modes:
            raise UserError(f"SCAFFOLD: IREE's {target} codegen fails for executable "
                            f"'{source.name}' (export {source.export.name}), so its launch "
                            f"shape is unknown, and {kind.description} takes none of its own; "
                            "scaffold it as LANGUAGE=mlir, or in a language a wrapped kernel "
                            "is written in")
        mode = "wrapped"
    translated = translated or source
    file = kernel_path(language, model, target, source.name)
    output = next((t for t in source.subspans if t.access != "readonly"), None)
    outputs = output_count(output, language)
    values = dict(plan.values(outputs))         # the kind's own, e.g. its launch shape's
    entry = render("scaffold/entry.toml.j2", model=model, target=target, executable=source,
                   file=file, mode=mode, fingerprint=fingerprint, outputs=outputs,
                   launch=plan.entry_template, **values,
                   workgroup_size=[WRAPPED_SIZE] if own_launch else [])
    if template is None:
        return Skeleton(file, dumped_source, entry)
    export = translated.export
    size = list([WRAPPED_SIZE] if own_launch else export.workgroup_size or (1, 1, 1)) + [1, 1, 1]
    body = dispatch_body.read(dumped_source)
    text = render(template, **values, comment=plan.comment, model=model,
                  target=target, executable=source,
                  export=source.export, mode=mode, types=source.binding_types,
                  tensors=[[t.describe() for t in source.subspans if t.binding == b.index]
                           for b in source.export.layout.bindings],
                  output=output, outputs=outputs,
                  offsets=source.binding_offsets,
                  sizes=[_element_bytes(t) for t in source.binding_types],
                  ctypes=[_element_type(t, _C_TYPES, "uint8_t") for t in source.binding_types],
                  glsltypes=[_element_type(t, _GLSL_TYPES, "uint") for t in source.binding_types],
                  local_size=size[:3], function=file.rsplit("/", 1)[1].rsplit(".", 1)[0],
                  launch_size="x".join(map(str, size[:3])),
                  launch_count=workload_names(export.count_text).replace("\n", "; ") or "-",
                  entry=ptx_text.entry_name(source.export.name),
                  body=body, arrays=constant_arrays(body, plan))
    return Skeleton(file, text, entry)


def constant_arrays(body: dispatch_body.Body, plan) -> list[str]:
    """Each folded constant the body reads, written out as an array as ``plan`` (the kind's
    ``Scaffold``) declares one: the values a kernel must hold itself."""
    if not plan.constant_array:
        return []
    opening, closing, suffix = plan.constant_array
    types = _GLSL_TYPES if opening.endswith("(") else _C_TYPES
    arrays = []
    for constant in body.constants:
        element = types.get(constant.element_type)
        if not constant.elements or element is None:
            continue
        head = opening.format(type=element, name=constant.identifier,
                              count=len(constant.elements))
        literals = [_literal(v, constant.element_type, suffix) for v in constant.elements]
        lines = textwrap.wrap(", ".join(literals), 96, break_on_hyphens=False)
        arrays.append(f"// {constant.name} : {constant.type}, row-major\n{head}\n"
                      + "\n".join(f"    {line}" for line in lines) + f"\n{closing}")
    return arrays


def _literal(value, element: str, suffix: str) -> str:
    """One element as a literal: floats with ``suffix`` (C's f) where f32; inf and NaN as
    expressions every language here folds."""
    if not element.startswith("f"):
        return str(int(value))
    if value != value:
        return "(0.0 / 0.0)"
    if value in (float("inf"), float("-inf")):
        return f"{'-' if value < 0 else ''}(1.0 / 0.0)"
    if element == "f32":
        import numpy as np                  # the shortest text that is this float32
        return str(np.float32(value)) + suffix
    return repr(float(value))


def output_count(output: Subspan | None, language: str) -> str:
    """The element count of ``output`` as an expression of ``language``; '' where unknown.

    A dynamic size is its push constant (the low word of a 64-bit one: sizes
    past 2**32 elements are not expected here).
    """
    if output is None:
        return ""
    named, factors = iter(output.dynamic_dims), []
    static = 1
    for size in output.shape:
        if size is not None:
            static *= size
            continue
        constants, _ = next(named, ((), None))
        if not constants or len(constants) > 2:
            return ""
        low = constants[0]
        factors.append(f"push_constants.values[{low}]" if language == "glsl" else f"c{low}")
    suffix = "u" if language in ("cuda", "glsl") else ""
    if static != 1 or not factors:
        factors.append(f"{static}{suffix}")
    return " * ".join(factors)


def _element_bytes(binding_type: str) -> int:
    """The byte size of a binding's element (1 where unknown or narrower than a byte)."""
    match = re.search(r"x?[a-z]+(\d+)(?:[A-Z]\w*)?>$", binding_type)
    return max(1, int(match.group(1)) // 8) if match else 1


def _element_type(binding_type: str, types: dict[str, str], fallback: str) -> str:
    match = re.search(r"x?([a-z]+\d+)>$", binding_type)
    return types.get(match.group(1), fallback) if match else fallback
