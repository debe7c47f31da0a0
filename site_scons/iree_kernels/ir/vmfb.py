"""A ``.vmfb`` as IREE writes it, and a copy of one with some rodata segments replaced.

What for: relinking. A module compiled with ``--iree-hal-link-executables=false``
keeps each executable's binary in a rodata segment of its own. Where a kernel
edit changes one executable's binary and nothing the host code depends on,
the module is that one with the segment's bytes replaced: the weights beside
it are copied, never parsed or serialized again.

The layout (IREE 3.x, checked when read): a zip archive whose first entry,
``module.fb``, is the size-prefixed ``iree.vm.BytecodeModuleDef`` FlatBuffer
and whose other entries are the rodata segments stored after it, each named
after its ``vm.rodata`` op and 64-byte aligned. The FlatBuffer locates each
external segment by (offset, length) from the end of the FlatBuffer, rounded
up to 64 bytes. A replaced segment keeps its place; what follows it moves by a
multiple of 64, and every offset, size and CRC the zip and the FlatBuffer hold
is updated, so the result is still a zip and a module the runtime loads.

Not for: deciding whether a relink is valid (the caller compares the
executables' host-visible interfaces), or writing files (``files``).
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

ALIGNMENT = 64
FLATBUFFER_ENTRY = "module.fb"
_LOCAL, _CENTRAL = b"PK\x03\x04", b"PK\x01\x02"
_END64, _LOCATOR64, _END = b"PK\x06\x06", b"PK\x06\x07", b"PK\x05\x06"
_ZIP64_EXTRA = 0x0001
_ROOT_RODATA_SEGMENTS = 9           # field index in BytecodeModuleDef
_SEGMENT_OFFSET, _SEGMENT_LENGTH = 3, 4   # field indices in RodataSegmentDef


class NotRelinkable(ValueError):
    """The file is not a module laid out as this module knows, or lacks a named segment."""


@dataclass(frozen=True)
class _Entry:
    name: str
    header: int             # offset of its local header
    data: int               # offset of its data
    size: int
    central: int            # offset of its central directory record


@dataclass(frozen=True)
class _Segment:
    offset_field: int       # where the FlatBuffer keeps its external_data_offset
    length_field: int
    start: int              # absolute offset of its data in the file
    length: int


def segment_names(content: bytes) -> list[str]:
    """The names of the module's rodata segments stored outside the FlatBuffer, in file order."""
    return [e.name for e in _Layout(content).entries[1:]]


def replace_segments(content: bytes, replacements: dict[str, bytes]) -> bytes:
    """``content`` (a .vmfb) with the rodata entries named in ``replacements`` holding the new bytes."""
    return b"".join(bytes(content[p.start:p.stop]) if isinstance(p, range) else bytes(p)
                    for p in pieces(content, replacements))


def pieces(content, replacements: dict[str, bytes]) -> list:
    """``replace_segments``'s result in order, as pieces: a ``range`` of bytes of ``content``
    (which may be a memory map) taken as they are, or bytes. What is not replaced is never
    copied here, so a writer can copy it file to file."""
    layout = _Layout(content)
    by_name = {e.name: e for e in layout.entries}
    missing = sorted(set(replacements) - set(by_name) | ({FLATBUFFER_ENTRY} & set(replacements)))
    if missing:
        raise NotRelinkable(f"the module has no rodata segment named {', '.join(missing)}")
    out: list = []
    length = 0
    moved: dict[int, int] = {}          # old offset of a local header or data -> new
    headers: dict[str, bytearray] = {}  # the local headers whose sizes or CRC change
    entries, fb = layout.entries, layout.entries[0]
    flatbuffer = bytearray(content[fb.data:fb.data + fb.size])
    for i, entry in enumerate(entries):
        end = entries[i + 1].header if i + 1 < len(entries) else layout.central
        changed = entry.name in replacements or entry is fb
        parts = [bytearray(content[entry.header:entry.data]) if changed
                 else range(entry.header, entry.data)]
        if changed:
            headers[entry.name] = parts[0]
        data = replacements.get(entry.name)
        if entry is fb:
            parts += [flatbuffer, range(fb.data + fb.size, end)]
        elif data is None:
            parts.append(range(entry.data, end))
        else:
            parts.append(data)
            if i + 1 < len(entries):    # what follows moves by a multiple of 64: it stays aligned
                parts += [bytes((entry.size - len(data)) % ALIGNMENT),
                          range(entry.data + entry.size, end)]
        moved[entry.header], moved[entry.data] = length, length + len(parts[0])
        out += parts
        length += sum(len(p) for p in parts)
    for segment in layout.segments:         # the FlatBuffer comes first: it has not moved
        struct.pack_into("<Q", flatbuffer, segment.offset_field - fb.data,
                         moved[segment.start] - layout.segments_base)
        name = layout.entry_at(segment.start).name
        if name in replacements:
            struct.pack_into("<Q", flatbuffer, segment.length_field - fb.data,
                             len(replacements[name]))
    central = bytearray()
    for entry in entries:
        data = flatbuffer if entry is fb else replacements.get(entry.name)
        size = entry.size if data is None else len(data)
        crc = None if data is None else zlib.crc32(data)
        if entry.name in headers:
            _update_local(headers[entry.name], 0, crc, size)
        record = bytearray(content[entry.central:_central_end(content, entry.central)])
        _update_central(record, crc, size, moved[entry.header])
        central += record
    out += [central, _ends(content, layout, length, len(central), length + len(central))]
    return out


class _Layout:
    """Where the zip's entries and the FlatBuffer's external segments are in ``content``."""

    def __init__(self, content: bytes) -> None:
        self.content = content
        self.end, self.end64 = self._ends()
        self.central, count = _u64(content, self.end64 + 48), _u64(content, self.end64 + 32)
        self.entries = self._entries(count)
        if not self.entries or self.entries[0].name != FLATBUFFER_ENTRY:
            raise NotRelinkable(f"the first zip entry is not {FLATBUFFER_ENTRY}")
        fb = self.entries[0]
        if content[fb.data + 8:fb.data + 12] != b"IREE":
            raise NotRelinkable("module.fb is not an IREE bytecode module")
        end = fb.data + 4 + _u32(content, fb.data)
        self.segments_base = end + (-end) % ALIGNMENT
        self.segments = self._segments(fb.data + 4)
        self._at = {e.data: e for e in self.entries}
        for s in self.segments:
            entry = self._at.get(s.start)
            if entry is None or entry.size != s.length:
                raise NotRelinkable("a rodata segment is not a zip entry of its own")

    def entry_at(self, start: int) -> _Entry:
        return self._at[start]

    def _ends(self) -> tuple[int, int]:
        """Where the end of central directory record and the zip64 one are."""
        c = self.content
        end = c.rfind(_END)
        if end < 0 or c.rfind(_LOCATOR64, 0, end) != end - 20:
            raise NotRelinkable("not a zip64 archive (no end of central directory)")
        end64 = _u64(c, end - 20 + 8)
        if c[end64:end64 + 4] != _END64:
            raise NotRelinkable("the zip64 end record is not where its locator says")
        return end, end64

    def _entries(self, count: int) -> list[_Entry]:
        c, at, entries = self.content, self.central, []
        for _ in range(count):
            if c[at:at + 4] != _CENTRAL:
                raise NotRelinkable("a central directory record is damaged")
            name_length, extra_length, comment_length = struct.unpack_from("<HHH", c, at + 28)
            name = c[at + 46:at + 46 + name_length].decode()
            size, header = _central_sizes(c, at)
            if c[header:header + 4] != _LOCAL or _u16(c, header + 8) != 0:
                raise NotRelinkable(f"zip entry {name} is damaged or compressed")
            data = header + 30 + sum(struct.unpack_from("<HH", c, header + 26))
            entries.append(_Entry(name, header, data, size, at))
            at += 46 + name_length + extra_length + comment_length
        return sorted(entries, key=lambda e: e.header)

    def _segments(self, root_at: int) -> list[_Segment]:
        c = self.content
        root = root_at + _u32(c, root_at)
        vector = _field(c, root, _ROOT_RODATA_SEGMENTS)
        if vector is None:
            return []
        vector += _u32(c, vector)
        segments = []
        for k in range(_u32(c, vector)):
            element = vector + 4 + 4 * k
            table = element + _u32(c, element)
            offset, length = (_field(c, table, _SEGMENT_OFFSET), _field(c, table, _SEGMENT_LENGTH))
            if offset is None or length is None:
                continue                    # embedded in the FlatBuffer
            segments.append(_Segment(offset, length, self.segments_base + _u64(c, offset),
                                     _u64(c, length)))
        return segments


def _field(c: bytes, table: int, index: int) -> int | None:
    """Where field ``index`` of the FlatBuffer table at ``table`` is, or None where absent."""
    vtable = table - struct.unpack_from("<i", c, table)[0]
    if 4 + 2 * index >= _u16(c, vtable):
        return None
    offset = _u16(c, vtable + 4 + 2 * index)
    return table + offset if offset else None


def _central_sizes(c: bytes, at: int) -> tuple[int, int]:
    """An entry's uncompressed size and local header offset from its central record."""
    size, header = _u32(c, at + 24), _u32(c, at + 42)
    wide = _zip64_extra(c, at + 46 + _u16(c, at + 28), _u16(c, at + 30))
    values = iter(struct.unpack_from(f"<{len(wide) // 8}Q", c, wide.start) if wide else ())
    if size == 0xFFFFFFFF:
        size = next(values)
        if _u32(c, at + 20) == 0xFFFFFFFF:
            next(values)
    if header == 0xFFFFFFFF:
        header = next(values)
    return size, header


def _zip64_extra(c, start: int, length: int) -> range | None:
    at = start
    while at + 4 <= start + length:
        ident, size = struct.unpack_from("<HH", c, at)
        if ident == _ZIP64_EXTRA:
            return range(at + 4, at + 4 + size)
        at += 4 + size
    return None


def _update_local(out: bytearray, header: int, crc: int | None, size: int) -> None:
    if crc is not None:
        struct.pack_into("<I", out, header + 14, crc)
    name_length, extra_length = struct.unpack_from("<HH", out, header + 26)
    wide = _zip64_extra(out, header + 30 + name_length, extra_length)
    if wide:
        struct.pack_into("<QQ", out, wide.start, size, size)
    else:
        struct.pack_into("<II", out, header + 18, size, size)


def _update_central(record: bytearray, crc: int | None, size: int, header: int) -> None:
    if crc is not None:
        struct.pack_into("<I", record, 16, crc)
    wide = _zip64_extra(record, 46 + _u16(record, 28), _u16(record, 30))
    values = []
    if _u32(record, 24) == 0xFFFFFFFF:
        values.append(size)
        if _u32(record, 20) == 0xFFFFFFFF:
            values.append(size)
    else:
        struct.pack_into("<II", record, 20, size, size)
    if _u32(record, 42) == 0xFFFFFFFF:
        values.append(header)
    else:
        struct.pack_into("<I", record, 42, header)
    if values:
        struct.pack_into(f"<{len(values)}Q", record, wide.start, *values)


def _central_end(c: bytes, at: int) -> int:
    return at + 46 + sum(struct.unpack_from("<HHH", c, at + 28))


def _ends(c: bytes, layout: _Layout, central: int, size: int, end64: int) -> bytes:
    """The zip64 end record, its locator and the end record, pointing at the new directory."""
    old_end, old_end64 = layout.end, layout.end64
    record = bytearray(c[old_end64:old_end - 20])
    struct.pack_into("<QQ", record, 40, size, central)
    locator = bytearray(c[old_end - 20:old_end])
    struct.pack_into("<Q", locator, 8, end64)
    tail = bytearray(c[old_end:])
    if _u32(tail, 12) != 0xFFFFFFFF:
        struct.pack_into("<I", tail, 12, min(size, 0xFFFFFFFF))
    return bytes(record + locator + tail)


def _u16(c, at: int) -> int:
    return struct.unpack_from("<H", c, at)[0]


def _u32(c, at: int) -> int:
    return struct.unpack_from("<I", c, at)[0]


def _u64(c, at: int) -> int:
    return struct.unpack_from("<Q", c, at)[0]
