"""Triton kernels (``@triton.jit`` functions in a ``.py`` file) compiled ahead of time for IREE.

A Triton kernel replaces an executable in wrapped mode: the build compiles the
function the manifest names to PTX (cuda) or a code object (hip), with the
manifest's ``constexprs``, ``num_warps`` and ``num_stages``, and the wrapper
launches it with the manifest's ``workgroup_count`` and the workgroup size and
dynamic shared memory Triton's metadata reports.

The ABI (``signature``): the function's parameters that are not
``tl.constexpr`` are, in order, one pointer per binding of the executable's
layout (its element type is the binding's tensor element type, unless the
parameter is annotated) and one ``i32`` per push constant. Triton appends two
pointers to every kernel (global and profile scratch); IREE passes neither, so
they are removed from the kernel's LLVM IR when the metadata says both are
0 bytes (``strip_scratch``), and a kernel needing scratch memory is refused.

This module is the plain library and, run as a script by the Python that has
Triton (``python triton_kernels.py --help``), the compile step itself. It
imports only the standard library at the top, so the build reads it without
Triton installed; it does not run SCons or iree-compile.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

# IREE's element types -> Triton's pointee type names.
ELEMENT_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "f64": "fp64",
                 "i1": "i8", "i8": "i8", "i16": "i16", "i32": "i32", "i64": "i64",
                 "ui8": "u8", "ui16": "u16", "ui32": "u32", "ui64": "u64",
                 "si8": "i8", "si16": "i16", "si32": "i32", "si64": "i64",
                 "f8E4M3FN": "fp8e4nv", "f8E5M2": "fp8e5", "f8E4M3FNUZ": "fp8e4b8",
                 "f8E5M2FNUZ": "fp8e5b16"}
# What a push constant may be declared as: IREE passes 32-bit words.
CONSTANT_TYPES = ("i32", "u32")
SCRATCH_PARAMS = 2        # Triton's global and profile scratch pointers, always last
ALIGNMENT = 16            # what a binding's address is a multiple of, as Triton is told


class TritonError(Exception):
    """A Triton kernel that cannot replace its executable; the message is one line.

    ``parameter``: the kernel parameter it is about, whose line the message gets.
    """

    def __init__(self, message: str, parameter: str = "") -> None:
        super().__init__(message)
        self.parameter = parameter


@dataclass(frozen=True)
class Param:
    """One parameter of a @triton.jit function, as the ABI check needs it."""
    name: str
    constexpr: bool = False
    annotation: str = ""          # Triton's normalised annotation: "*fp32", "i32", "fp32", ""
    has_default: bool = False


def interface(sub, executable) -> dict:
    """What the compile step needs of a substitution and the executable it replaces (JSON-able)."""
    layout = executable.export.layout
    elements = {}
    for subspan in getattr(executable, "subspans", ()):
        elements.setdefault(subspan.binding, subspan.element)
    return {
        "manifest": f"{sub.origin.file}:{sub.origin.line}: {sub.origin.entry}"
                    if sub.origin.line else f"{sub.origin.file}: {sub.origin.entry}",
        "kernel": sub.file,
        "function": "entry" if sub.facts else sub.function,     # triton_family.FUNCTION
        "executable": executable.name,
        "entry": entry_name(executable.export.name),
        "bindings": [ELEMENT_TYPES.get(elements.get(b.index, "i8"), "i8")
                     for b in layout.bindings],
        "constants": layout.constants,
        "constexprs": dict(sub.kind_fields["constexprs"]),
        "num_warps": sub.kind_fields["num_warps"],
        "num_stages": sub.kind_fields["num_stages"],
    }


def entry_name(export: str) -> str:
    """The kernel name IREE's CUDA and HIP runtimes look ``export`` up by (as ptx.entry_name)."""
    return re.sub(r"[^A-Za-z0-9_]", "_", export)


def signature(params: list[Param], spec: dict) -> tuple[dict, dict]:
    """Triton's (signature, constexprs) for ``params`` against the layout in ``spec``.

    Raises TritonError for a parameter count that does not match the layout, a
    64-bit or float scalar, a pointer where a push constant goes (or the
    reverse), and constexprs the function does not take or lacks.
    """
    function, bindings, constants = spec["function"], spec["bindings"], spec["constants"]
    given = dict(spec.get("constexprs", {}))
    runtime = [p for p in params if not p.constexpr]
    expected = (f"{len(bindings)} pointer{'s' if len(bindings) != 1 else ''} (one per binding) "
                f"then {constants} i32 (one per push constant)")
    if len(runtime) != len(bindings) + constants:
        names = ", ".join(p.name for p in runtime) or "none"
        raise TritonError(f"'{function}' takes {len(runtime)} parameters that are not "
                          f"tl.constexpr ({names}); executable '{spec['executable']}' passes "
                          f"{len(bindings) + constants}: {expected}")
    sig, constexprs = {}, {}
    for position, param in enumerate(runtime):
        kind = param.annotation
        if position < len(bindings):
            if kind and not kind.startswith("*"):
                raise TritonError(f"'{function}' parameter '{param.name}' is annotated {kind}, "
                                  f"but binding {position} is passed there: a pointer; "
                                  f"expected {expected}", param.name)
            sig[param.name] = kind or f"*{bindings[position]}"
            continue
        if kind.startswith("*"):
            raise TritonError(f"'{function}' parameter '{param.name}' is a pointer ({kind}), "
                              f"but push constant {position - len(bindings)} is passed there; "
                              f"expected {expected}", param.name)
        if kind and kind not in CONSTANT_TYPES:
            width = "a 64-bit" if kind.endswith("64") else "a float" if "f" in kind else "a"
            raise TritonError(f"'{function}' parameter '{param.name}' is {width} scalar ({kind}); "
                              f"IREE passes push constants as 32-bit integers: declare it i32 "
                              f"(a 64-bit value arrives as two, low word first; a float as its "
                              f"bits: .to(tl.float32, bitcast=True))", param.name)
        sig[param.name] = kind or "i32"
    for param in params:
        if not param.constexpr:
            if param.name in given:
                raise TritonError(f"constexprs sets '{param.name}', but '{function}' takes it "
                                  f"at run time (it is not annotated tl.constexpr)", param.name)
            continue
        sig[param.name] = "constexpr"
        if param.name in given:
            constexprs[param.name] = given.pop(param.name)
        elif not param.has_default:
            raise TritonError(f"'{function}' needs a value for its tl.constexpr parameter "
                              f"'{param.name}': add it to the entry's constexprs", param.name)
    if given:
        known = ", ".join(p.name for p in params if p.constexpr) or "none"
        raise TritonError(f"constexprs sets {', '.join(sorted(given))}, which '{function}' has "
                          f"no tl.constexpr parameter for (its tl.constexpr parameters: {known})")
    return sig, constexprs


def pointer_alignment(params: list[Param], sig: dict) -> dict:
    """Triton's attrs saying every pointer is 16-byte aligned, as Triton's launcher does for a
    16-aligned address: IREE's bindings are (IREE's own kernels declare their pointers
    ``llvm.align = 16``; the subspans say ``alignment(64)``). Without it
    loads are not vectorised and tl.dot's operands do not go through TMA or cp.async."""
    return {(i,): [["tt.divisibility", ALIGNMENT]] for i, p in enumerate(params)
            if sig.get(p.name, "").startswith("*")}


def check_metadata(metadata: dict, spec: dict) -> None:
    """Refuse what IREE cannot launch: scratch memory, clusters, cooperative or PDL launches."""
    function = spec["function"]
    for key, what in (("global_scratch_size", "global scratch"),
                      ("profile_scratch_size", "profile scratch")):
        if metadata.get(key):
            raise TritonError(f"'{function}' needs {metadata[key]} bytes of {what} memory per "
                              f"launch, which IREE does not allocate (Triton passes it as a "
                              f"trailing pointer); avoid what needs it (device-side tensor "
                              f"descriptors, device_print, proton profiling)")
    if metadata.get("num_ctas", 1) != 1:
        raise TritonError(f"'{function}' uses num_ctas={metadata['num_ctas']}: IREE launches "
                          f"no thread-block clusters")
    for key in ("launch_cooperative_grid", "launch_pdl"):
        if metadata.get(key):
            raise TritonError(f"'{function}' needs {key}, which IREE's launches do not do")


def launch(metadata: dict) -> dict:
    """The launch shape Triton's metadata gives: workgroup size and dynamic shared memory."""
    return {"workgroup_size": [metadata["num_warps"] * metadata["warp_size"], 1, 1],
            "workgroup_local_memory": int(metadata.get("shared") or 0)}


_DEFINE_RE = re.compile(r"^define\b[^\n]*?@(\"?[\w.$]+\"?)\(", re.MULTILINE)


def strip_scratch(llir: str, entry: str) -> str:
    """The kernel's LLVM IR with its two trailing scratch parameters removed and renamed ``entry``.

    Raises TritonError where the body reads either parameter.
    """
    found = [m for m in _DEFINE_RE.finditer(llir)
             if re.search(r"\b(amdgpu_kernel|ptx_kernel)\b", m.group(0))] or \
        list(_DEFINE_RE.finditer(llir))
    if len(found) != 1:
        raise TritonError(f"Triton's LLVM IR defines {len(found)} kernels, expected 1")
    define = found[0]
    name = define.group(1)
    start = define.end()
    close = _closing(llir, start - 1)
    params = _split_top(llir[start:close])
    if len(params) < SCRATCH_PARAMS:
        raise TritonError("Triton's kernel lacks its two scratch parameters: an unknown "
                          "Triton ABI (this build knows triton 3.9)")
    body_start = llir.index("{", close)
    body_end = llir.index("\n}", body_start)
    body = llir[body_start:body_end]
    for param in params[-SCRATCH_PARAMS:]:
        value = param.split()[-1]
        if value.startswith("%") and re.search(rf"{re.escape(value)}\b", body):
            raise TritonError("the kernel reads Triton's scratch pointer, which IREE does not "
                              "pass")
    kept = ", ".join(params[:-SCRATCH_PARAMS])
    rest = llir[close:body_end]
    removed = [int(p.split()[-1][1:]) for p in params[-SCRATCH_PARAMS:]
               if re.fullmatch(r"%\d+", p.split()[-1])]
    if removed:
        # Unnamed values are numbered in order, arguments first: the body's shift down.
        first, count = min(removed), len(removed)

        def shifted(m: re.Match) -> str:
            number = int(m.group(2))
            return f"{m.group(1)}{number - count if number > first else number}"
        rest = re.sub(r"(%)(\d+)\b", shifted, rest)
        rest = re.sub(r"(?m)^(\s*)(\d+)(?=:)", shifted, rest)
    text = llir[:start] + kept + rest + llir[body_end:]
    return re.sub(rf"@{re.escape(name)}\b", f"@{entry}", text)


def _closing(text: str, open_at: int) -> int:
    depth = 0
    for i in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            return i
    raise TritonError("unreadable LLVM IR from Triton: unbalanced parameter list")


def _split_top(params: str) -> list[str]:
    found, depth, current = [], 0, ""
    for c in params:
        depth += {"(": 1, ")": -1, "<": 1, ">": -1, "{": 1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            found.append(current.strip())
            current = ""
        else:
            current += c
    if current.strip():
        found.append(current.strip())
    return found


def gpu_target(arch: str) -> tuple[str, int | str, int]:
    """(backend, arch, warp size) of Triton's GPUTarget for sm_80, sm_90a or gfx942."""
    if m := re.fullmatch(r"sm_(\d+)a?", arch):
        return "cuda", int(m.group(1)), 32
    if re.fullmatch(r"gfx[0-9a-f]+", arch):
        return "hip", arch, 64 if arch.startswith("gfx9") else 32
    raise TritonError(f"'{arch}' is not a CUDA (sm_80) or AMD (gfx942) architecture")


def kernel_line(fn, parameter: str = "") -> str:
    """' (at kernels/k.py:12)': the line of ``fn``'s ``parameter``, or of its ``def``; or ''."""
    first = getattr(fn, "def_file_line_number", None)
    try:
        path = os.path.relpath(fn.fn.__code__.co_filename)
    except (AttributeError, ValueError):
        return ""
    if first is None:
        return ""
    line = first
    if parameter:
        try:
            arguments = ast.parse(textwrap.dedent(fn.src)).body[0].args
        except (SyntaxError, IndexError, AttributeError, TypeError):
            arguments = None
        for arg in (arguments.posonlyargs + arguments.args + arguments.kwonlyargs
                    if arguments else ()):
            if arg.arg == parameter:
                line = first + arg.lineno - 1
    return f" (at {path}:{line})"


def source_line(error, fn) -> str:
    """' (at kernels/k.py:12)' for a Triton CompilationError, or ''."""
    node = getattr(error, "node", None)
    # The error's line counts from the 'def' line (the source Triton parses has no decorator).
    first = getattr(fn, "def_file_line_number", None)
    if node is None or not hasattr(node, "lineno") or first is None:
        return ""
    try:
        path = os.path.relpath(fn.fn.__code__.co_filename)
    except (AttributeError, ValueError):
        return ""
    return f" (at {path}:{first + node.lineno - 1})"


# ---- the compile step: run by the Python that has Triton --------------------------------

def _load_function(path: str, name: str):
    import importlib.util
    folder = str(Path(path).resolve().parent)
    for entry in (os.getcwd(), folder):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    sys.dont_write_bytecode = True      # no __pycache__ in the user's kernels/ folder
    module_name = "_iree_kernels_triton_" + re.sub(r"\W", "_", Path(path).stem)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:       # the user's module: any error it raises is theirs
        line = _traceback_line(e, path)
        raise TritonError(f"importing it failed: {type(e).__name__}: {_one_line(e)}{line}") \
            from None
    import triton
    jitted = {k: v for k, v in vars(module).items()
              if isinstance(v, triton.runtime.JITFunction)}
    fn = getattr(module, name, None)
    if fn is None or not isinstance(fn, triton.runtime.JITFunction):
        found = ", ".join(sorted(jitted)) or "none"
        what = "no @triton.jit function" if fn is None else "a function that is not @triton.jit,"
        raise TritonError(f"{what} named '{name}'; its @triton.jit functions: {found}")
    return fn


def _traceback_line(error: BaseException, path: str) -> str:
    import traceback
    wanted = os.path.realpath(path)
    lines = [f.lineno for f in traceback.extract_tb(error.__traceback__)
             if os.path.realpath(f.filename) == wanted]
    if isinstance(error, SyntaxError) and error.lineno:
        lines.append(error.lineno)
    return f" (at {path}:{lines[-1]})" if lines else ""


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text[:400] + ("..." if len(text) > 400 else "")


def compile_kernel(kernel: str, spec: dict, arch: str, ptx_version: str) -> tuple[bytes, dict]:
    """The compiled kernel (PTX text or a code object) and Triton's metadata."""
    os.environ.setdefault("TRITON_DISABLE_LINE_INFO", "1")    # no build paths in the output
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    # Triton's cache: a fresh one (nothing compiled elsewhere is taken), removed afterwards.
    with tempfile.TemporaryDirectory(prefix="iree-kernels-triton-") as cache:
        os.environ["TRITON_CACHE_DIR"] = cache
        return _compile(kernel, spec, arch, ptx_version)


def _compile(kernel: str, spec: dict, arch: str, ptx_version: str) -> tuple[bytes, dict]:
    import triton
    from triton import knobs
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.errors import CompilationError

    fn = _load_function(kernel, spec["function"])
    params = [Param(p.name, p.is_constexpr, p.annotation, p.has_default) for p in fn.params]
    try:
        sig, constexprs = signature(params, spec)
    except TritonError as e:
        raise TritonError(f"{e}{kernel_line(fn, e.parameter)}") from None
    backend, target_arch, warp_size = gpu_target(arch)
    options = {"num_warps": spec.get("num_warps") or 4}
    if spec.get("num_stages"):
        options["num_stages"] = spec["num_stages"]
    if backend == "cuda":
        major, minor = (int(n) for n in ptx_version.split("."))
        options["ptx_version"] = major * 10 + minor

    def inspect_stages(*args):
        if not args:
            return "iree-kernels", spec["entry"]
        _, stages, _, _, _ = args
        make_llir = stages["llir"]

        def llir(src, metadata):
            text = make_llir(src, metadata)
            check_metadata(metadata, spec)
            return strip_scratch(text, spec["entry"])
        stages["llir"] = llir
        if "cubin" in stages:
            # Not Triton's bundled ptxas (its PTX ISA is not the driver's): the build checks
            # the PTX with the module's ptxas -arch=CUDA_ARCH, and IREE loads PTX.
            stages["cubin"] = lambda src, metadata: b""
    knobs.runtime.add_stages_inspection_hook = inspect_stages
    try:
        compiled = triton.compile(ASTSource(fn, sig, constexprs, pointer_alignment(params, sig)),
                                  target=GPUTarget(backend, target_arch, warp_size),
                                  options=options)
    except TritonError as e:     # the metadata's and the scratch parameters' checks
        raise TritonError(f"{e}{kernel_line(fn)}") from None
    except CompilationError as e:
        message = _one_line(e.error_message or type(e).__name__) if e.error_message else \
            type(e).__name__
        cause = e.__cause__ or e.__context__
        if not e.error_message and cause:
            message = f"{type(cause).__name__}: {_one_line(cause)}"
        raise TritonError(f"Triton cannot compile '{spec['function']}': {message}"
                          f"{source_line(e, fn)}") from None
    except Exception as e:       # Triton's own failures (MLIR passes, LLVM): one line
        raise TritonError(f"Triton cannot compile '{spec['function']}': "
                          f"{type(e).__name__}: {_one_line(e)}") from None
    metadata = compiled.metadata._asdict()
    metadata["target"] = {"backend": backend, "arch": target_arch, "warp_size": warp_size}
    metadata.pop("extern_libs", None)       # paths into the installed package
    metadata.update(launch(metadata))
    binary = compiled.asm["ptx"].encode() if backend == "cuda" else compiled.asm["hsaco"]
    return binary, json.loads(json.dumps(metadata, default=str))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Compile a Triton kernel for an IREE executable.")
    parser.add_argument("kernel", help="the .py file holding the @triton.jit function")
    parser.add_argument("--interface", required=True, help="what triton_kernels.interface wrote")
    parser.add_argument("--arch", required=True, help="sm_80, sm_90a, gfx942, ...")
    parser.add_argument("--ptx-version", default="9.0", help="PTX ISA version to write (cuda)")
    parser.add_argument("--metadata", required=True, help="where Triton's metadata (JSON) goes")
    parser.add_argument("-o", "--output", required=True)
    args = parser.parse_args(argv)
    spec = json.loads(Path(args.interface).read_text())
    try:
        binary, metadata = compile_kernel(args.kernel, spec, args.arch, args.ptx_version)
    except TritonError as e:
        print(f"error: {spec['manifest']}: kernel {args.kernel}: {e}", file=sys.stderr)
        return 1
    Path(args.output).write_bytes(binary)
    Path(args.metadata).write_text(json.dumps(metadata, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    # Run as a script, this folder comes first on sys.path: its triton.py (the kind) is not Triton.
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.exit(main(sys.argv[1:]))
