"""A program at IREE's executable-sources phase, read and edited with the MLIR bindings.

``iree-compile --compile-to=executable-sources`` writes the whole program with
each ``hal.executable`` still before codegen. The build runs IREE's front end
once per model and target to get it, then edits it here instead of running the
front end again: an executable is replaced by the op of the same name from
other MLIR text, cloned in its place, which is what
``--iree-hal-substitute-executable-source`` does inside iree-compile. The
edited program is printed for ``iree-compile --compile-from=executable-sources``.

It also says where the host code dispatches each executable
(``dispatch_sites``: push constants and binding lengths of every site).
Not for: reading layouts and exports (``executables``), keying or compiling
executables (``codegen_cache``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import ops_within


@dataclass(frozen=True)
class ProgramExecutable:
    """One ``hal.executable`` of a program, printed on its own."""
    name: str
    visibility: str           # "private", "public", "nested", or "" where not printed
    text: str                 # the op as MLIR prints it, attributes inline (local scope)
    resources: str = ""       # the ``{-# dialect_resources #-}`` section of what ``text`` uses

    def standalone(self) -> str:
        """The op as a file of its own: with the resources (``dense_resource`` data) it uses."""
        return f"{self.text}\n{self.resources}" if self.resources else self.text

    def as_dumped(self) -> str:
        """``standalone``, public, as ``--iree-hal-dump-executable-sources-to`` writes it (alone,
        iree-compile crashes on a private one); the printer quotes a name that needs it."""
        return _HEADER_VISIBILITY_RE.sub("hal.executable public ", self.standalone(), count=1)


_HEADER_VISIBILITY_RE = re.compile(r"^hal\.executable (?:(?:private|public|nested) )?")


@dataclass(frozen=True)
class DispatchSite:
    """One ``stream.cmd.dispatch`` of an executable: what the host code passes it there.

    A value the host computes at run time is None.
    """
    executable: str
    export: str
    function: str                        # the host function it is in
    number: int                          # 1, 2, ...: its place among the executable's sites
    workload: tuple[int | None, ...]
    constants: tuple[int | None, ...]    # the push constants' values
    constant_texts: tuple[str, ...]      # each as MLIR writes it: "1024 : i32" ('' if unknown)
    lengths: tuple[int | None, ...]      # per binding, the bytes of the resource range bound

    @property
    def static(self) -> bool:
        return None not in self.workload + self.lengths and "" not in self.constant_texts

    def describe(self, count: int) -> str:
        """``dispatch site 2 of 3 (in @main, push constants 0, 1024)``."""
        shown = ", ".join("?" if c is None else str(c) for c in self.constants)
        return (f"dispatch site {self.number} of {count} (in @{self.function}"
                + (f", push constants {shown}" if self.constants else "") + ")")


class Program:
    """A parsed executable-sources program; use as a context manager (it holds an MLIR context)."""

    def __init__(self, text: str, source: str = "<program>") -> None:
        from iree.compiler import ir

        self._ir = ir
        self._context = ir.Context()
        self._context.allow_unregistered_dialects = True
        self.source = source
        self._module = _parse(ir, text, self._context, source)

    def __enter__(self) -> "Program":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._module = None
        self._context = None

    def executables(self) -> list[ProgramExecutable]:
        """Every top-level ``hal.executable``, in program order."""
        found = []
        for op in self._executable_ops():
            text = _print(op)
            resources = self._resources_used([op]) if _USES_RESOURCES in text else ""
            found.append(ProgramExecutable(_name(op), _visibility(op), text, resources))
        return found

    def resources(self, names: list[str]) -> str:
        """The ``{-# dialect_resources #-}`` section the named executables use ("" if none)."""
        return self._resources_used([self._executable(name) for name in names])

    def module_name(self) -> str:
        """The program's module name, as IREE prefixes the files it dumps with it."""
        attributes = self._module.operation.attributes
        return attributes["sym_name"].value if "sym_name" in attributes else "module"

    def names(self) -> list[str]:
        return [_name(op) for op in self._executable_ops()]

    def replace(self, name: str, mlir: str, source: str, visibility: str | None = None,
                linked: "EmbeddedObject | None" = None) -> None:
        """Put the ``hal.executable @name`` of ``mlir`` (read from ``source``) in place of this one's.

        ``visibility``: what the new op is declared (``""``: nothing); None keeps
        the replacement's own. ``linked``: an object its one variant links.
        """
        original = self._executable(name)
        replacement = _parse(self._ir, mlir, self._context, source)
        found = [op for op in _top_level(replacement) if op.name == "hal.executable"
                 and _name(op) == name]
        if not found:
            names = ", ".join(_name(op) for op in _top_level(replacement)
                              if op.name == "hal.executable") or "none"
            raise UserError(f"holds no hal.executable @{name} (its executables: {names})",
                            file=source)
        if visibility is not None:
            _set_visibility(self._ir, found[0], visibility, self._context)
        if linked is not None:
            _link(self._ir, found[0], linked, self._context, source)
        found[0].move_before(original)
        original.erase()

    def edit_executable(self, name: str, visibility: str | None = None,
                        linked: "EmbeddedObject | None" = None) -> None:
        """Declare ``hal.executable @name`` ``visibility`` (None: as it is); make it link ``linked``."""
        op = self._executable(name)
        if visibility is not None:
            _set_visibility(self._ir, op, visibility, self._context)
        if linked is not None:
            _link(self._ir, op, linked, self._context, self.source)

    def without_imports(self, name: str) -> None:
        """Drop from ``hal.executable @name`` what it links: its variants' objects, the functions
        they would provide (``hal.import.static``) and the calls to them. Its export ops stay as
        they are; it compiles without the objects (a stand-in for a wrapped CPU kernel)."""
        for variant in _ops_named(self._executable(name), "hal.executable.variant"):
            if "objects" in variant.attributes:
                del variant.attributes["objects"]
            for code in _ops_named(variant, "builtin.module"):
                imported = {_name(f) for f in _ops_named(code, "func.func")
                            if "hal.import.static" in f.attributes}
                for call in ops_within(code, "func.call"):
                    if self._ir.FlatSymbolRefAttr(call.attributes["callee"]).value in imported:
                        call.erase()
                for function in _ops_named(code, "func.func"):
                    if _name(function) in imported:
                        function.erase()

    def is_external(self, name: str) -> bool:
        """Whether ``hal.executable @name`` links objects and has no code to translate."""
        variants = _ops_named(self._executable(name), "hal.executable.variant")
        return bool(variants) and all("objects" in v.attributes
                                      and not _ops_named(v, "builtin.module") for v in variants)

    def executable_text(self, name: str) -> str:
        """The ``hal.executable @name`` as a file of its own, with the resources it uses."""
        op = self._executable(name)
        text = _print(op)
        return f"{text}\n{self._resources_used([op])}" if _USES_RESOURCES in text else text

    def without_code(self, name: str) -> str:
        """The ``hal.executable @name`` with its variants' ``builtin.module`` cut out (here too).

        What is left of a translated executable is what codegen decided: the
        export ops whole (count region, workgroup size, subgroup size, memory).
        """
        op = self._executable(name)
        for variant in _ops_named(op, "hal.executable.variant"):
            for code in _ops_named(variant, "builtin.module"):
                code.erase()
        return _print(op)

    def specialize(self, function: str, shapes: list[tuple[int, ...]]) -> None:
        """Fold the shapes of ``function``'s inputs (one per argument) into the program.

        Each ``hal.buffer_view.dim`` of an argument becomes a constant and the
        host code is canonicalized, so dispatch sites that only the inputs'
        shapes left dynamic get constant workloads, push constants and sizes.
        A torch export's ``@main`` calls ``@main$async``, which reads the
        dimensions (its arguments: the same inputs, then two fences): both are
        specialized. The executables are left as they are.
        """
        from iree.compiler import passmanager
        from iree.compiler.dialects import arith

        ir = self._ir
        functions = {_name(op): op for op in _top_level(self._module) if op.name == "util.func"}
        if function not in functions:
            raise UserError(f"has no function @{function} to specialize", file=self.source)
        found = [functions[name] for name in (function, f"{function}$async") if name in functions]
        with self._context, ir.Location.unknown():
            for op in (op for f in found for op in ops_within(f, "hal.buffer_view.dim")):
                argument = ir.BlockArgument(op.operands[0]).arg_number
                dim = ir.IntegerAttr(op.attributes["index"]).value
                if argument >= len(shapes) or dim >= len(shapes[argument]):
                    raise UserError(f"@{function} reads dimension {dim} of input {argument}; "
                                    f"the inputs given have shapes {shapes}", file=self.source)
                with ir.InsertionPoint(op):
                    constant = arith.ConstantOp(ir.IndexType.get(), shapes[argument][dim])
                op.results[0].replace_all_uses_with(constant.result)
                op.erase()
            passmanager.PassManager.parse(
                "builtin.module(util.func(canonicalize, cse), canonicalize)").run(
                    self._module.operation)

    def dispatch_sites(self) -> dict[str, list[DispatchSite]]:
        """Per executable, every place the host code dispatches it, in program order."""
        sites: dict[str, list[DispatchSite]] = {}
        for function in _top_level(self._module):
            if function.name not in ("util.func", "func.func"):
                continue
            for op in ops_within(function, "stream.cmd.dispatch"):
                workload, constants, *_, lengths = _segments(op)
                for entry in self._ir.ArrayAttr(op.attributes["entry_points"]):
                    executable, export = _entry_point(str(entry))
                    found = sites.setdefault(executable, [])
                    found.append(DispatchSite(
                        executable, export, _name(function), len(found) + 1,
                        tuple(map(_integer, workload)), tuple(map(_integer, constants)),
                        tuple(map(_constant_text, constants)), tuple(map(_integer, lengths))))
        return sites

    def text(self) -> str:
        """The program as iree-compile prints it, attributes inline, with its resources.

        A local-scope print leaves out the ``{-# dialect_resources #-}`` section
        (torch exports' weights), and every ``dense_resource`` constant would
        then name data that does not exist: a program using resources is
        printed at module scope, which keeps them (attributes as aliases).
        """
        text = _print(self._module.operation)
        if _USES_RESOURCES not in text:
            return text
        return self._module.operation.get_asm(assume_verified=True).rstrip("\n")

    def _resources_used(self, ops) -> str:
        """The resource section of a scratch module holding copies of ``ops``: only what they use."""
        ir = self._ir
        with self._context, ir.Location.unknown():
            scratch = ir.Module.create()
            for op in ops:
                op.clone(ir.InsertionPoint(scratch.body))
            printed = scratch.operation.get_asm(assume_verified=True)
        start = printed.find("\n{-#")
        return printed[start + 1:].rstrip("\n") if start >= 0 else ""

    def _executable_ops(self):
        return [op for op in _top_level(self._module) if op.name == "hal.executable"]

    def _executable(self, name: str):
        for op in self._executable_ops():
            if _name(op) == name:
                return op
        raise UserError(f"holds no hal.executable @{name}", file=self.source)


_USES_RESOURCES = "dense_resource<"
_DIAGNOSTIC_RE = re.compile(r'error: "-":(\d+):(\d+): (.*)')


def _parse(ir, text: str, context, source: str):
    try:
        return ir.Module.parse(text, context=context)
    except ir.MLIRError as e:
        found = _DIAGNOSTIC_RE.search(str(e))
        if found:
            line, column, message = found.groups()
            raise UserError(f"{source}:{line}:{column}: {message.strip()}") from None
        detail = "; ".join(line.strip() for line in str(e).strip().splitlines()[:3])
        raise UserError(f"is not MLIR: {detail}", file=source) from None


def _segments(op) -> list[list]:
    """The operand groups of ``op``, as its operandSegmentSizes splits them."""
    sizes = list(op.attributes["operandSegmentSizes"]) if "operandSegmentSizes" in \
        op.attributes else [len(op.operands)]
    operands, groups, start = list(op.operands), [], 0
    for size in sizes:
        groups.append(operands[start:start + size])
        start += size
    return groups


def _entry_point(text: str) -> tuple[str, str]:
    """``@exe::@variant::@export`` -> (exe, export)."""
    parts = [p.strip().strip("@").strip('"') for p in text.split("::")]
    return parts[0], parts[-1]


def _constant_text(value) -> str:
    owner = value.owner
    if getattr(owner, "name", "") != "arith.constant":
        return ""
    return str(owner.attributes["value"])


def _integer(value) -> int | None:
    text = _constant_text(value)
    try:
        return int(text.split(":")[0])
    except ValueError:
        return None


def _top_level(module):
    return [op.operation for op in module.body.operations]


def _name(op) -> str:
    return op.attributes["sym_name"].value


def _visibility(op) -> str:
    return op.attributes["sym_visibility"].value if "sym_visibility" in op.attributes else ""


def _set_visibility(ir, op, visibility: str, context) -> None:
    if visibility:
        op.attributes["sym_visibility"] = ir.StringAttr.get(visibility, context)
    elif "sym_visibility" in op.attributes:
        del op.attributes["sym_visibility"]


def _print(op) -> str:
    # assume_verified: printing verifies every op otherwise, ten times the cost of the print.
    return op.get_asm(assume_verified=True, use_local_scope=True).rstrip("\n")


@dataclass(frozen=True)
class EmbeddedObject:
    """An object a variant links, its bytes embedded in the program.

    ``name`` is the object's path, which IREE's printer needs beside the data
    (its own object substitution writes the file's name); the data is what is linked.
    """
    name: str
    data: bytes

    def text(self) -> str:
        return (f'#hal.executable.object<{{path = "{self.name}", data = '
                f'dense<"0x{self.data.hex().upper()}"> : vector<{len(self.data)}xi8>}}>')

    def attribute_text(self) -> str:
        return f"[{self.text()}]"


def _link(ir, executable, linked: EmbeddedObject, context, source: str) -> None:
    """Make the one variant of ``executable`` link ``linked``: CUDA and Vulkan take exactly one."""
    variants = _ops_named(executable, "hal.executable.variant")
    if len(variants) != 1:
        raise UserError("expected a hal.executable with one variant", file=source)
    variants[0].attributes["objects"] = ir.Attribute.parse(linked.attribute_text(), context)


def _ops_named(op, name: str) -> list:
    return [inner.operation for region in op.regions for block in region.blocks
            for inner in block.operations if inner.operation.name == name]

