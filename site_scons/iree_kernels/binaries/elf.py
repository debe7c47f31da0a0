"""Reading the symbol table of an ELF file: the kernels a GPU code object holds, the
functions a native object (a C kernel compiled for llvm-cpu) defines.

Plain Python over the bytes (64-bit little-endian ELF only); it runs no tool.
Not for: what an object's code does, or its relocations.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from iree_kernels.core.errors import UserError

_SHT_SYMTAB, _SHT_DYNSYM = 2, 11
_STT_FUNC, _STB_LOCAL = 2, 0


@dataclass(frozen=True)
class Symbol:
    name: str
    function: bool            # STT_FUNC
    defined: bool             # in a section of this file (not undefined)
    local: bool               # STB_LOCAL: a static function, not visible to the linker


def read_symbols(data: bytes, path: str, what: str = "ELF file") -> list[Symbol]:
    """Every named symbol of ``data``; raise naming ``path`` if it is not a 64-bit
    little-endian ELF file or its tables are cut off."""
    if data[:4] != b"\x7fELF" or len(data) < 64 or data[4] != 2 or data[5] != 1:
        raise UserError(f"not {what}: not a 64-bit little-endian ELF file", file=path)
    try:
        return _symbols(data)
    except struct.error:
        raise UserError(f"the {what} is truncated: its section table is cut off",
                        file=path) from None


def _symbols(data: bytes) -> list[Symbol]:
    shoff, = struct.unpack_from("<Q", data, 40)
    shentsize, shnum = struct.unpack_from("<HH", data, 58)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    found = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind not in (_SHT_SYMTAB, _SHT_DYNSYM) or not entsize:
            continue
        strings_offset, strings_size = sections[link][4], sections[link][5]
        strings = data[strings_offset:strings_offset + strings_size]
        for i in range(size // entsize):
            name, info, _, shndx = struct.unpack_from("<IBBH", data, offset + i * entsize)
            end = strings.find(b"\0", name)
            if end > name:
                found.append(Symbol(strings[name:end].decode("utf-8", "replace"),
                                    info & 0xF == _STT_FUNC, shndx != 0,
                                    info >> 4 == _STB_LOCAL))
    return found


def check_function(data: bytes, path: str, function: str) -> None:
    """Raise unless the native object ``data`` defines ``function`` for the linker to find."""
    symbols = read_symbols(data, path, "a native object")
    defined = [s for s in symbols if s.function and s.defined]
    exported = sorted({s.name for s in defined if not s.local})
    if function in exported:
        return
    if any(s.name == function for s in defined):
        raise UserError(f"function '{function}' is static (local to the object); the wrapper "
                        "imports it by name: remove 'static'", file=path)
    listed = ", ".join(exported) or "none"
    hint = (f"; set function = \"{exported[0]}\" in the manifest" if len(exported) == 1
            else "; set function = \"NAME\" in the manifest")
    raise UserError(f"defines no function '{function}', which the wrapper imports "
                    f"(the manifest's function, default: the kernel file's stem); "
                    f"the functions it defines: {listed}{hint}", file=path)
