"""SCons tool: Triton kernels (.py holding @triton.jit functions) -> PTX or AMD GPU code objects.

Builders:
  Triton           [kernel.py, interface.json] -> [kernel.ptx (or .hsaco), kernel.ptx.json]
                   the second target is Triton's metadata: workgroup_size, workgroup_local_memory
  TritonFamilyEntry Value(substitution: a family's instance) -> <key>.entry.py, the
                   @triton.jit entry its kernel is compiled through for that executable
                   (iree_kernels.kinds.triton_family)
  TritonInterface  Value(substitution) + executables.json + resolved.json -> interface.json:
                   the function, constexprs, num_warps, num_stages, the entry name and the
                   signature the executable's layout gives (iree_kernels.kinds.triton_kernels)

A Triton kernel's signature comes from the executable it replaces (one pointer
per binding, typed like the binding's tensors, then one i32 per push constant),
so it is compiled once per substitution, after the executable is known. The
compile runs in its own process (``$TRITON_PYTHON``, the Python that runs SCons
by default) within KERNEL_COMPILE_TIMEOUT; it reads nothing of the manifest
from the command line, only from the interface file.

Variables:
  TRITON_ARCH         sm_80, sm_90a (cuda) or gfx942 (hip): what it is compiled for;
                      iree_project gives each call the module's architecture, or the
                      manifest's ``arch``
  TRITON_PTX_VERSION  the PTX ISA version written (cuda), default $PTX_ISA_VERSION
  TRITON_PYTHON       the Python that has triton installed
  TRITONFLAGS         extra arguments of the compile script
  TRITONCOM, TRITONCOMSTR   the command line and its short form

The ``.py`` file's imports that are files of the repository (beside it, or
from the repository root) are dependencies, found by a scanner.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import sys
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Errors
import SCons.Scanner

from iree_kernels.ir import listing
from iree_kernels.module import selection, substitution
from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.ir.gemm_facts import Contraction
from iree_kernels.kinds import triton_family, triton_kernels
from iree_kernels.kinds.gemm_interface import Unsupported
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import not_regular
from iree_kernels.project.records import Substitution
from iree_kernels.core.files import write_atomically
from iree_kernels.scons.escaping import file_argument, program
from iree_kernels.scons.kernels import KernelCompiler, ToolVersion, add_kernel_compiler
from iree_kernels.scons.nodes import named_value, read_spec
from iree_kernels.scons.reporting import reporting_user_errors
from iree_kernels.scons.spawn import whole_file_command

SCRIPT = Path(triton_kernels.__file__)


class TritonVersion(ToolVersion):
    """Triton's version, from its package metadata (no process): keys every Triton compile."""

    def __init__(self) -> None:
        super().__init__("triton")

    def __str__(self) -> str:
        import importlib.metadata           # here: every scons run loads this tool

        try:
            return f"triton {importlib.metadata.version('triton')}"
        except importlib.metadata.PackageNotFoundError:
            return "triton not installed"


_version = None


def triton_version():
    global _version
    if _version is None:
        _version = named_value(TritonVersion(), "triton version")
    return _version


def _emitter(target, source, env):
    kernel = target[0]
    target = [kernel, kernel.target_from_source("", kernel.get_suffix() + ".json")
              if len(target) == 1 else target[1]]
    env.Depends(target, [env.fs.File(str(SCRIPT)), triton_version()])
    return target, source


def _scan_imports(node, env, path):
    """The repository's files a kernel imports: ``import x``/``from x import y`` found as x.py
    (or x/__init__.py) beside the file or under the repository root."""
    if node.get_suffix() != ".py" or not node.exists() or not_regular(node.abspath):
        return []
    try:
        tree = ast.parse(node.get_text_contents(), filename=str(node))
    except (SyntaxError, ValueError):
        return []        # the compile step reports it, with its line
    top = env.Dir("#")
    folders = [node.dir, top]
    found = []
    for statement in ast.walk(tree):
        names = []
        if isinstance(statement, ast.Import):
            names = [alias.name for alias in statement.names]
        elif isinstance(statement, ast.ImportFrom) and statement.module and not statement.level:
            names = [statement.module] + [f"{statement.module}.{a.name}" for a in statement.names]
        for name in names:
            parts = name.split(".")
            for folder in folders:
                for candidate in (folder.File("/".join(parts) + ".py"),
                                  folder.File("/".join(parts + ["__init__.py"]))):
                    if candidate.exists() and candidate.is_under(top) and candidate != node:
                        why = not_regular(candidate.abspath)
                        if why:             # hashing a FIFO blocks, /dev/zero never ends
                            raise SCons.Errors.UserError(
                                f"{candidate.get_path()}: a module {node.get_path()} imports "
                                f"is {why}, not a regular file")
                        found.append(candidate)
    return list(dict.fromkeys(found))


@reporting_user_errors
def write_interface(target, source, env):
    sub = Substitution.from_dict(read_spec(source[0]))
    listed, resolved = source[1], source[2]
    found = listing.loads(listed.get_text_contents(), str(listed)).executables
    executable = substitution.plan_substitutions(
        [sub], found, checks=substitution.UNCHECKED,
        landed=selection.loads(resolved.get_text_contents()))[0].executable
    write_atomically(target[0].abspath, json.dumps(triton_kernels.interface(sub, executable),
                                                   indent=1, sort_keys=True) + "\n")


def _explain(target, source, env, output: str) -> str:
    """The compile step's one line (it names the manifest entry), or '' for any other failure."""
    for line in output.splitlines():
        if line.startswith("error: "):
            return line[len("error: "):]
    return ""


def _compiler(env) -> tuple[str, str | None]:
    return "triton", sys.executable if importlib.util.find_spec("triton") else None


@reporting_user_errors
def write_family_entry(target, source, env):
    sub = Substitution.from_dict(read_spec(source[0]))
    try:
        text = triton_family.entry(
            Contraction.from_dict(sub.facts), executable=sub.executable,
            export=sub.facts["export"], model=sub.model, target=sub.target, kernel=sub.file,
            function=sub.function, constexprs=sorted(sub.kind_fields.get("constexprs", {})))
    except Unsupported as e:
        o = sub.origin
        raise UserError(f"{o.file}:{o.line}: {o.entry}: the family's entry cannot be "
                        f"written: {e}") from None
    write_atomically(target[0].abspath, text)


def generate(env):
    env.SetDefault(
        TRITON_ARCH="sm_80",
        TRITON_PTX_VERSION="$PTX_ISA_VERSION",
        PTX_ISA_VERSION=settings.default("PTX_ISA_VERSION"),
        TRITON_PYTHON=program(sys.executable),
        TRITON_SCRIPT=file_argument(str(SCRIPT)),
        TRITONFLAGS=[],
        TRITONCOM="$( $TRITON_PYTHON $) $( $TRITON_SCRIPT $) --arch=$TRITON_ARCH "
                  "--ptx-version=$TRITON_PTX_VERSION $TRITONFLAGS --interface=${SOURCES[1]} "
                  "--metadata=${TARGETS[1]} -o $TARGET $SOURCE",
        TRITONCOMSTR="",
        TRITON_INTERFACECOMSTR="Writing the Triton kernel's interface $TARGET",
        TRITON_FAMILYENTRYCOMSTR="Writing the Triton family's entry $TARGET",
    )
    toolchains.INSTALL.setdefault("triton", "pip install triton==3.9.0 (./setup.sh does; "
                                            "iree-kernels[triton])")
    action = whole_file_command("TRITONCOM", "$TRITONCOMSTR", explain=_explain)
    scanner = SCons.Scanner.Scanner(_scan_imports, name="TritonImportScanner", skeys=[".py"],
                                    recursive=True)
    env["BUILDERS"]["Triton"] = SCons.Builder.Builder(
        action=action, suffix=".ptx", src_suffix=".py", source_scanner=scanner,
        emitter=_emitter)
    env["BUILDERS"]["TritonFamilyEntry"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_family_entry, "$TRITON_FAMILYENTRYCOMSTR"))
    env["BUILDERS"]["TritonInterface"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_interface, "$TRITON_INTERFACECOMSTR"), suffix=".json")
    add_kernel_compiler(env, KernelCompiler(".py", "TRITONCOM", _compiler, "TRITON_ARCH"),
                        action, [_emitter], ".ptx", scanner)


def exists(env):
    return importlib.util.find_spec("triton") is not None
