"""Reading a compiled SPIR-V kernel and checking it against the executable it replaces.

``--iree-hal-substitute-executable-object=NAME=FILE.spv`` takes any file without
looking inside: a wrong entry point name, binding layout or push-constant block
builds fine and fails (or computes wrong numbers) only at run time. This module
reads the few facts that matter from the binary words (GLCompute entry points,
workgroup size, storage-buffer bindings, push-constant size) and compares them
with IREE's layout for the export.

It is not a SPIR-V validator (``run_spirv_val`` asks ``spirv-val``), not a
disassembler; it assumes one compute kernel per file.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from iree_kernels.core import processes, toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Executable, Export

MAGIC = 0x07230203
TARGET_ENV = "vulkan1.0"        # the Vulkan version GLSL kernels are compiled and validated for
HEADER_WORDS = 5

# Opcodes and enumerants, as numbered in the SPIR-V specification.
OP_NAME, OP_ENTRY_POINT, OP_EXECUTION_MODE, OP_EXECUTION_MODE_ID = 5, 15, 16, 331
OP_TYPE_BOOL, OP_TYPE_INT, OP_TYPE_FLOAT, OP_TYPE_VECTOR, OP_TYPE_MATRIX = 20, 21, 22, 23, 24
OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY, OP_TYPE_STRUCT, OP_TYPE_POINTER = 28, 29, 30, 32
OP_CONSTANT, OP_CONSTANT_COMPOSITE, OP_SPEC_CONSTANT, OP_SPEC_CONSTANT_COMPOSITE = 43, 44, 50, 51
OP_FUNCTION, OP_FUNCTION_END, OP_VARIABLE, OP_DECORATE, OP_MEMBER_DECORATE = 54, 56, 59, 71, 72
GL_COMPUTE, LOCAL_SIZE, LOCAL_SIZE_ID, WORKGROUP_SIZE = 5, 17, 38, 25
BUFFER_BLOCK, ARRAY_STRIDE, BUILT_IN, NON_WRITABLE, BINDING, DESCRIPTOR_SET, OFFSET = \
    3, 6, 11, 24, 33, 34, 35
UNIFORM, PUSH_CONSTANT, STORAGE_BUFFER = 2, 9, 12


@dataclass(frozen=True)
class SpirvBinding:
    set: int
    binding: int
    read_only: bool
    kind: str = "storage buffer"     # or "uniform buffer", "image or sampler"


@dataclass(frozen=True)
class SpirvModule:
    entry_points: tuple[str, ...]              # GLCompute entry point names
    local_size: tuple[int, int, int] | None
    bindings: tuple[SpirvBinding, ...]         # sorted by (set, binding)
    push_constant_words: int | None            # None: no push-constant block


def read_spirv(data: bytes, path: str) -> SpirvModule:
    """The facts ``check_spirv`` needs from the binary ``data`` read from ``path``."""
    words = _words(data, path)
    ids = _Ids()
    try:
        for opcode, operands in _instructions(words, path):
            ids.record(opcode, operands)
        return ids.module(path)
    except (IndexError, KeyError, ValueError, UnicodeDecodeError, RecursionError):
        raise UserError("corrupt SPIR-V: an instruction has missing or inconsistent operands "
                        "(check it with spirv-val)", file=path) from None


def rename_entry_point(data: bytes, path: str, old: str, new: str) -> bytes:
    """``data`` with the GLCompute entry point ``old`` renamed ``new`` (and its OpName)."""
    words = _words(data, path)
    out = list(words[:HEADER_WORDS])
    renamed = False
    for opcode, operands in _instructions(words, path):
        if opcode == OP_ENTRY_POINT and operands[0] == GL_COMPUTE and _string(operands[2:]) == old:
            name_words = _string_words(old)
            operands = (*operands[:2], *_string_words(new), *operands[2 + len(name_words):])
            renamed = True
        elif opcode == OP_NAME and _string(operands[1:]) == old:
            operands = (operands[0], *_string_words(new))
        out += [(len(operands) + 1) << 16 | opcode, *operands]
    if not renamed:
        raise UserError(f"no GLCompute entry point named '{old}' to rename to '{new}'", file=path)
    return struct.pack(f"<{len(out)}I", *out)


def _string_words(text: str) -> tuple[int, ...]:
    raw = text.encode("utf-8") + b"\0"
    raw += b"\0" * (-len(raw) % 4)
    return struct.unpack(f"<{len(raw) // 4}I", raw)


def _words(data: bytes, path: str) -> tuple[int, ...]:
    if not data:
        raise UserError("empty file; expected a SPIR-V binary", file=path)
    first = int.from_bytes(data[:4], "little")
    if first == int.from_bytes(MAGIC.to_bytes(4, "little"), "big"):
        raise UserError("SPIR-V in big-endian byte order (magic number byte-swapped); "
                        "Vulkan on this host needs little-endian words", file=path)
    if first != MAGIC:
        text = " (is it text: GLSL or spirv-dis output?)" if data[:4].isascii() else ""
        raise UserError(f"not a SPIR-V binary: first word is 0x{first:08x}, expected the magic "
                        f"number 0x{MAGIC:08x}{text}", file=path)
    if len(data) % 4 or len(data) < 4 * HEADER_WORDS:
        raise UserError(f"truncated SPIR-V: {len(data)} bytes is not a whole header and "
                        "instruction stream of 32-bit words", file=path)
    return struct.unpack(f"<{len(data) // 4}I", data)


def _instructions(words: tuple[int, ...], path: str):
    at = HEADER_WORDS
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if count == 0:
            raise UserError(f"corrupt SPIR-V: instruction at word {at} has word count 0", file=path)
        if at + count > len(words):
            raise UserError(f"truncated SPIR-V: instruction at word {at} (opcode {opcode}) needs "
                            f"{count} words, the file ends after {len(words) - at}", file=path)
        yield opcode, words[at + 1:at + count]
        at += count


def _string(operands: tuple[int, ...]) -> str:
    raw = b"".join(w.to_bytes(4, "little") for w in operands)
    return raw[:raw.index(b"\0")].decode("utf-8")


@dataclass
class _Ids:
    """What the instruction stream says about each result id, collected in one pass."""
    entry_points: list = field(default_factory=list)            # (function id, name)
    local_sizes: dict = field(default_factory=dict)             # function id -> sizes
    local_size_ids: dict = field(default_factory=dict)          # function id -> constant ids
    decorations: dict = field(default_factory=dict)             # id -> {decoration: literals}
    member_decorations: dict = field(default_factory=dict)      # (struct, member) -> {...}
    types: dict = field(default_factory=dict)                   # id -> (opcode, operands)
    constants: dict = field(default_factory=dict)               # id -> value
    composites: dict = field(default_factory=dict)              # id -> constituent ids
    variables: list = field(default_factory=list)               # (pointer type, id, class)
    functions: set = field(default_factory=set)
    function_ends: int = 0

    def record(self, opcode: int, ops: tuple[int, ...]) -> None:
        if opcode == OP_ENTRY_POINT and ops[0] == GL_COMPUTE:
            self.entry_points.append((ops[1], _string(ops[2:])))
        elif opcode == OP_EXECUTION_MODE and ops[1] == LOCAL_SIZE:
            self.local_sizes[ops[0]] = tuple(ops[2:5])
        elif opcode == OP_EXECUTION_MODE_ID and ops[1] == LOCAL_SIZE_ID:
            self.local_size_ids[ops[0]] = tuple(ops[2:5])
        elif opcode == OP_DECORATE:
            self.decorations.setdefault(ops[0], {})[ops[1]] = ops[2:]
        elif opcode == OP_MEMBER_DECORATE:
            self.member_decorations.setdefault((ops[0], ops[1]), {})[ops[2]] = ops[3:]
        elif OP_TYPE_BOOL <= opcode <= OP_TYPE_POINTER:
            self.types[ops[0]] = (opcode, ops[1:])
        elif opcode in (OP_CONSTANT, OP_SPEC_CONSTANT):
            self.constants[ops[1]] = sum(w << (32 * i) for i, w in enumerate(ops[2:]))
        elif opcode in (OP_CONSTANT_COMPOSITE, OP_SPEC_CONSTANT_COMPOSITE):
            self.composites[ops[1]] = ops[2:]
        elif opcode == OP_VARIABLE:
            self.variables.append((ops[0], ops[1], ops[2]))
        elif opcode == OP_FUNCTION:
            self.functions.add(ops[1])
        elif opcode == OP_FUNCTION_END:
            self.function_ends += 1

    def module(self, path: str) -> SpirvModule:
        bodiless = any(fn not in self.functions for fn, _ in self.entry_points)
        if bodiless or self.function_ends != len(self.functions):
            raise UserError("truncated SPIR-V: a function body is incomplete or missing", file=path)
        bindings = [self._binding(v) for v in self.variables
                    if BINDING in self.decorations.get(v[1], {})]
        push = [self._size(self._pointee(t)) for t, _, c in self.variables if c == PUSH_CONSTANT]
        return SpirvModule(
            entry_points=tuple(name for _, name in self.entry_points),
            local_size=self._local_size(),
            bindings=tuple(sorted(bindings, key=lambda b: (b.set, b.binding))),
            push_constant_words=(max(push) + 3) // 4 if push else None)

    def _local_size(self) -> tuple[int, int, int] | None:
        # A constant decorated BuiltIn WorkgroupSize overrides every entry point's LocalSize.
        for ident, decorations in self.decorations.items():
            built_in = tuple(decorations.get(BUILT_IN, ()))
            if built_in == (WORKGROUP_SIZE,) and ident in self.composites:
                return tuple(self.constants[c] for c in self.composites[ident])
        for fn, _ in self.entry_points:
            if fn in self.local_sizes:
                return self.local_sizes[fn]
            if fn in self.local_size_ids:
                return tuple(self.constants[c] for c in self.local_size_ids[fn])
        return None

    def _binding(self, variable: tuple[int, int, int]) -> SpirvBinding:
        pointer, ident, storage = variable
        decorations = self.decorations[ident]
        block = self._block(self._pointee(pointer))
        if storage == STORAGE_BUFFER or BUFFER_BLOCK in self.decorations.get(block, {}):
            kind = "storage buffer"
        else:
            kind = "uniform buffer" if storage == UNIFORM else "image or sampler"
        members = self.types[block][1] if self.types[block][0] == OP_TYPE_STRUCT else ()
        read_only = NON_WRITABLE in decorations or bool(members) and all(
            NON_WRITABLE in self.member_decorations.get((block, i), {})
            for i in range(len(members)))
        return SpirvBinding(decorations.get(DESCRIPTOR_SET, (0,))[0], decorations[BINDING][0],
                            read_only, kind)

    def _pointee(self, pointer: int) -> int:
        return self.types[pointer][1][1]

    def _block(self, type_id: int) -> int:
        """The block type of a descriptor, or of each element of an array of descriptors."""
        opcode, ops = self.types[type_id]
        arrays = (OP_TYPE_ARRAY, OP_TYPE_RUNTIME_ARRAY)
        return self._block(ops[0]) if opcode in arrays else type_id

    def _size(self, type_id: int) -> int:
        """Size in bytes, as laid out by Offset and ArrayStride decorations."""
        opcode, ops = self.types[type_id]
        if opcode in (OP_TYPE_INT, OP_TYPE_FLOAT):
            return ops[0] // 8
        if opcode in (OP_TYPE_VECTOR, OP_TYPE_MATRIX):
            return ops[1] * self._size(ops[0])
        if opcode == OP_TYPE_ARRAY:
            stride = self.decorations.get(type_id, {}).get(ARRAY_STRIDE, (self._size(ops[0]),))[0]
            return stride * self.constants[ops[1]]
        if opcode == OP_TYPE_STRUCT:
            end = 0
            for member, member_type in enumerate(ops):
                offset = self.member_decorations.get((type_id, member), {}).get(OFFSET, (end,))[0]
                end = max(end, offset + self._size(member_type))
            return end
        return {OP_TYPE_POINTER: 8, OP_TYPE_BOOL: 4}.get(opcode, 0)    # runtime arrays: 0


def check_spirv(module: SpirvModule, path: str, executable: Executable,
                entry: str | None = None) -> None:
    """Raise a UserError for the first way ``module`` cannot stand in for ``executable``.

    Each check below yields what is wrong, if anything, most fundamental first.
    """
    for check in (_entry_point, _workgroup_size, _descriptor_sets, _binding_count,
                  _binding_indices, _binding_kinds, _writable_bindings, _push_constants):
        problem = next(check(module, executable.export), None)
        if problem:
            raise UserError(f"SPIR-V does not fit executable '{executable.name}': {problem}",
                            file=path, entry=entry)


def _entry_point(module: SpirvModule, export: Export):
    if export.name not in module.entry_points:
        found = ", ".join(f"'{name}'" for name in module.entry_points) or "none"
        yield (f"expected a GLCompute entry point named '{export.name}' (the export name), found "
               f"{found}; compile with glslangValidator -e {export.name} --source-entrypoint main")


def _workgroup_size(module: SpirvModule, export: Export):
    if module.local_size is None:
        yield ("the shader declares no workgroup size (LocalSize); "
               "add layout(local_size_x = ...) in;")


def _descriptor_sets(module: SpirvModule, export: Export):
    for b in module.bindings:
        if b.set != 0:
            yield (f"binding {b.binding} is in descriptor set {b.set}, expected set 0 "
                   f"(IREE binds set 0 only; set={b.set} crashes lavapipe)")


def _binding_count(module: SpirvModule, export: Export):
    expected, found = len(export.layout.bindings), len(module.bindings)
    if expected != found:
        yield (f"expected {expected} bindings ({export.layout.describe()}), found {found} "
               f"[{_indices(module)}]")


def _binding_indices(module: SpirvModule, export: Export):
    if [b.binding for b in module.bindings] != list(range(len(module.bindings))):
        yield f"expected bindings 0..{len(module.bindings) - 1}, found [{_indices(module)}]"


def _binding_kinds(module: SpirvModule, export: Export):
    for b in module.bindings:
        if b.kind != "storage buffer":
            yield (f"binding {b.binding} is a {b.kind}, expected a storage buffer "
                   "(declare it 'buffer')")


def _writable_bindings(module: SpirvModule, export: Export):
    # The opposite (IREE read-only, shader writable) is harmless and allowed.
    for expected, found in zip(export.layout.bindings, module.bindings):
        if not expected.read_only and found.read_only:
            yield (f"binding {found.binding} is writable in IREE's layout, but the shader "
                   "declares it readonly (NonWritable)")


def _push_constants(module: SpirvModule, export: Export):
    expected, found = export.layout.constants, module.push_constant_words
    if expected == 0 and found is not None:
        yield f"expected no push constants, found a push-constant block of {found} words"
    elif expected > 0 and (found or 0) < expected:
        yield (f"expected a push-constant block of at least {expected} 32-bit words, found "
               f"{found or 'none'} (declare layout(push_constant) uniform PushConstants "
               f"{{ uint values[{expected}]; }})")


def _indices(module: SpirvModule) -> str:
    return ", ".join(str(b.binding) if b.set == 0 else f"set {b.set} binding {b.binding}"
                     for b in module.bindings)


def run_spirv_val(spirv_val: str, path: str, target_env: str = TARGET_ENV,
                  timeouts: toolchains.Timeouts | None = None) -> None:
    """Raise with spirv-val's own message if it rejects ``path``."""
    limit = (timeouts or toolchains.default_timeouts()).of("KERNEL_COMPILE_TIMEOUT")
    try:
        result = processes.run([spirv_val, "--target-env", target_env, path], limit=limit)
    except processes.TimeLimit:
        raise UserError(toolchains.timeout_message("spirv-val", limit,
                                                  "KERNEL_COMPILE_TIMEOUT"),
                        file=path) from None
    except OSError as e:
        raise UserError(f"cannot run spirv-val '{spirv_val}': {e.strerror}", file=path) from None
    if result.returncode != 0:
        message = " ".join((result.stderr + result.stdout).split())
        raise UserError(f"spirv-val rejected the SPIR-V: {message}", file=path)
