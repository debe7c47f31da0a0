"""Reading a hand-written kernel's PTX and checking it against the IREE executable it replaces.

iree-compile takes any ``.ptx`` given to ``--iree-hal-substitute-executable-object``
and checks nothing: a kernel with the wrong name fails only when the module is
loaded, one with the wrong parameters computes wrong numbers without an error.
This module reads the few directives that decide whether IREE can launch a
kernel (``.version``, ``.target``, ``.address_size``, each ``.entry`` with its
parameter types) and compares them with IREE's CUDA kernel ABI: one 64-bit
pointer per binding, in order, then one 32-bit value per push constant.
``run_ptxas`` has ptxas validate the whole file without a GPU.

It is not a PTX parser: instruction bodies and ``.func`` are not read, and it
neither compiles CUDA nor runs iree-compile.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from iree_kernels.core import processes, toolchains
from iree_kernels.core.errors import UserError

POINTER_TYPES = (".u64", ".b64", ".s64")
CONSTANT_TYPES = (".u32", ".b32", ".s32", ".f32")

# A string is matched first so that '//' or '/*' inside a .file path is not a comment.
_COMMENT_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"|//[^\n]*|/\*.*?\*/', re.DOTALL)
_VERSION_RE = re.compile(r"^[ \t]*\.version[ \t]+(\d+)\.(\d+)", re.MULTILINE)
_TARGET_RE = re.compile(r"^[ \t]*\.target[ \t]+([\w.]+)", re.MULTILINE)
_ADDRESS_SIZE_RE = re.compile(r"^[ \t]*\.address_size[ \t]+(\d+)", re.MULTILINE)
_ENTRY_RE = re.compile(r"\.entry\s+([\w$%]+)\s*(?:\(([^)]*)\))?")
_TYPE_RE = re.compile(r"\.(?:[bsu](?:8|16|32|64)|f(?:16|32|64))\b")
_ARRAY_RE = re.compile(r"(\[\s*\d*\s*\])\s*$")
_MANGLED_RE = re.compile(r"_Z(\d+)")
_PTXAS_RE = re.compile(r"^ptxas\s+(?:.*?, line (\d+); )?(\w+)\s*: (.*)$")


@dataclass(frozen=True)
class PtxEntry:
    name: str
    params: tuple[str, ...]     # PTX types in order: ".u64", ".u32"; arrays as ".b8[8]"
    line: int                   # 1-based line of the .entry directive


@dataclass(frozen=True)
class PtxModule:
    version: tuple[int, int]
    target: str
    address_size: int
    entries: dict[str, PtxEntry]
    version_line: int = 0


def read_ptx(text: str, path: str) -> PtxModule:
    """The directives and kernels of one PTX file; raise if it is not PTX with a kernel."""
    code = _COMMENT_RE.sub(_blank_comment, text)
    if not code.strip():
        raise UserError("the PTX file is empty" + (" but for comments" if text.strip() else ""),
                        file=path)
    version = _VERSION_RE.search(code)
    if not version:
        raise UserError("not PTX: no '.version' directive (nvcc -ptx writes one, "
                        "e.g. '.version 9.0')", file=path)
    entries = {}
    for m in _ENTRY_RE.finditer(code):
        entries[m.group(1)] = PtxEntry(m.group(1), _param_types(m.group(2) or ""),
                                       _line_of(code, m.start()))
    if not entries:
        raise UserError("no '.entry' in this PTX: it holds no kernel (only a "
                        "__global__ function becomes an .entry; __device__ ones are .func)",
                        file=path)
    target = _TARGET_RE.search(code)
    address_size = _ADDRESS_SIZE_RE.search(code)
    return PtxModule((int(version.group(1)), int(version.group(2))),
                     target.group(1) if target else "",
                     int(address_size.group(1)) if address_size else 32,  # PTX's default
                     entries, _line_of(code, version.start(1)))


def check_ptx(module: PtxModule, path: str, executable, *,
              max_version: tuple[int, int] = (9, 0), entry: str | None = None) -> None:
    """Raise on the first way ``module`` cannot replace ``executable`` on CUDA.

    ``entry`` names the manifest entry that asked for the substitution, for the message.
    """
    where = {"file": path, "entry": entry}
    subject = f"executable '{executable.name}'"
    if not executable.exports:
        raise UserError(f"{subject} has no export for a kernel to replace", **where)
    if module.version > max_version:
        raise UserError(_version_message(subject, module.version, max_version),
                        line=module.version_line or None, **where)
    export = executable.export
    name = entry_name(export.name)
    kernel = module.entries.get(name)
    if kernel is None:
        raise UserError(_missing_entry_message(subject, name, module.entries), **where)
    _check_params(kernel, export.layout, subject, where)


def entry_name(export: str) -> str:
    """The kernel name IREE's CUDA runtime looks up for ``export``: what is not [A-Za-z0-9_] is '_'.

    ONNX imports name exports ``model$async_dispatch_N_...``: their kernels are
    ``model_async_dispatch_N_...``, as NVPTX writes IREE's own. (A kernel named
    with the '$' loads as CUDA_ERROR_NOT_FOUND; seen on an H200, driver 580.)
    """
    return re.sub(r"[^A-Za-z0-9_]", "_", export)


def ptxas_argv(ptxas: str, path: str, arch: str) -> list[str]:
    """The command that validates ``path`` for ``arch`` (e.g. sm_80) without a GPU."""
    return [ptxas, f"-arch={arch}", path, "-o", "/dev/null"]


def run_ptxas(ptxas: str, path: str, arch: str,
              timeouts: toolchains.Timeouts | None = None) -> None:
    """Raise with ptxas's own messages if it rejects ``path``."""
    limit = (timeouts or toolchains.default_timeouts()).of("KERNEL_COMPILE_TIMEOUT")
    try:
        result = processes.run(ptxas_argv(ptxas, path, arch), limit=limit)
    except processes.TimeLimit:
        raise UserError(toolchains.timeout_message("ptxas", limit, "KERNEL_COMPILE_TIMEOUT"),
                        file=path) from None
    except OSError as e:
        raise UserError(f"cannot run ptxas '{ptxas}': {e.strerror}", file=path) from None
    if result.returncode != 0:
        line, message = _ptxas_diagnostics(result.stderr + result.stdout, result.returncode)
        raise UserError(f"ptxas -arch={arch} rejected the PTX: {message}", file=path, line=line)


def expected_signature(layout) -> str:
    """IREE's kernel ABI for ``layout``, e.g. '(ptr binding0, ptr binding1, i32 c0)'."""
    params = [f"ptr binding{i}" for i in range(len(layout.bindings))]
    params += [f"i32 c{i}" for i in range(layout.constants)]
    return f"({', '.join(params)})"


def _blank_comment(match: re.Match) -> str:
    found = match.group(0)
    if found.startswith('"'):
        return found
    return "\n" * found.count("\n") or " "     # keeps line numbers


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _param_types(params: str) -> tuple[str, ...]:
    types = []
    for param in filter(None, (p.strip() for p in params.split(","))):
        ptx_type = _TYPE_RE.search(param)
        array = _ARRAY_RE.search(param)
        types.append((ptx_type.group(0) if ptx_type else param)
                     + (re.sub(r"\s", "", array.group(1)) if array else ""))
    return tuple(types)


def _version_message(subject: str, found: tuple[int, int], newest: tuple[int, int]) -> str:
    return (f"{subject}: PTX ISA version {_dotted(found)} is newer than {_dotted(newest)}, "
            f"the newest allowed; a CUDA driver loads only PTX ISA versions it knows "
            f"(the driver for CUDA 13.0 loads up to 9.0), so the nvcc that produced this "
            f"PTX is too new. Use an nvcc no newer than the driver, or, if the driver "
            f"that runs it is newer, set PTX_ISA_VERSION to the version it loads")


def _missing_entry_message(subject: str, name: str, entries: dict[str, PtxEntry]) -> str:
    found = ", ".join(f"'{n}'" for n in entries)
    message = (f"{subject}: the PTX has no .entry named '{name}' (the name IREE "
               f"launches its export by); found {found}")
    by_plain_name = {_unmangled(n): n for n in entries}
    match = difflib.get_close_matches(name, list(by_plain_name), n=1, cutoff=0.6)
    suggestion = by_plain_name[match[0]] if match else None
    if suggestion and suggestion != name and _unmangled(suggestion) == name:
        return (f"{message}. '{suggestion}' is the C++-mangled name of '{name}': "
                f"declare the kernel extern \"C\" to keep its name")
    if suggestion:
        message += f" (did you mean '{suggestion}'?)"
    if any(n.startswith("_Z") for n in entries):
        message += ". Names starting with _Z are C++-mangled: a kernel needs extern \"C\""
    return message


def _unmangled(name: str) -> str:
    """The function name inside a simple Itanium-mangled '_Z<len><name>...', else ``name``."""
    m = _MANGLED_RE.match(name)
    if not m:
        return name
    return name[m.end():m.end() + int(m.group(1))]


def _check_params(kernel: PtxEntry, layout, subject: str, where: dict) -> None:
    bindings, constants = len(layout.bindings), layout.constants
    expected = f"{kernel.name}{expected_signature(layout)}"
    found = f"({', '.join(kernel.params)})"
    if len(kernel.params) != bindings + constants:
        raise UserError(
            f"{subject}: kernel '{kernel.name}' has {len(kernel.params)} parameters, "
            f"expected {bindings + constants} ({_count(bindings, 'binding')} + "
            f"{_count(constants, 'push constant')}): expected {expected}, found {found}",
            line=kernel.line, **where)
    for position, ptx_type in enumerate(kernel.params):
        is_binding = position < bindings
        role = f"binding{position}" if is_binding else f"c{position - bindings}"
        allowed = POINTER_TYPES if is_binding else CONSTANT_TYPES
        if ptx_type not in allowed:
            what = "a 64-bit pointer" if is_binding else "a 32-bit push constant"
            raise UserError(
                f"{subject}: kernel '{kernel.name}' parameter {position + 1} ({role}) is "
                f"{ptx_type}, expected {what} ({'/'.join(allowed)}): expected {expected}, "
                f"found {found}", line=kernel.line, **where)


def _ptxas_diagnostics(output: str, returncode: int) -> tuple[int | None, str]:
    """The first line number ptxas names, and its messages joined on one line."""
    found = [m.groups() for m in map(_PTXAS_RE.match, output.splitlines()) if m]
    useful = [d for d in found if "aborted due to errors" not in d[2]] or found
    if not useful:
        return None, output.strip() or f"exit status {returncode}"
    first = next((int(line) for line, _, _ in useful if line), None)
    messages = [f"{severity}: {text.strip()}"
                + (f" (line {line})" if line and int(line) != first else "")
                for line, severity, text in useful]
    return first, "; ".join(messages)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _dotted(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"
