"""Exact header dependencies of kernel compiles, from the depfiles the compilers write;
the ``#include`` scanner where there is none yet, and the package's own include folder.

A kernel builder (Ptx, Spirv, ElfObject, and env.Kernel for their sources)
declares two targets: the compiled kernel and ``<kernel>.d``, the depfile
its compiler writes with every file the compile read (``nvcc/clang -MMD
-MF``, ``glslc -MD -MF``, ``glslangValidator --depfile``). However an
include directory is given
(``*_CPPPATH``, ``-I`` in ``NVCCFLAGS`` or ``GLSLANGFLAGS``, ``-include``),
the file is in the depfile, so editing it rebuilds exactly the kernels that
read it. System headers (``-MMD``) are left out; CUDA's own headers, which nvcc
reports anyway, are kept.

The depfile is known only once the kernel has been compiled, as in ninja or
Bazel, so:

- the target scanner reads the depfile the last compile wrote, where there
  is one; where there is none (the kernel was never built, or was cleaned),
  the kernel is built anyway, and the scanner falls back to the regex scan
  of ``#include`` lines over ``*_CPPPATH``, which also refuses a header that
  is a FIFO before a compiler blocks on it;
- right after a compile (or a CacheDir retrieval, which brings the depfile
  too) the target's dependencies are read again from the new depfile before
  SCons records them, so the build that follows compares against what the
  compile read, and a first build is followed by one that runs nothing.

Not covered, as with make and ninja: a new header that would now shadow the
one found (created in an include directory searched earlier); touch the
kernel. On a fresh checkout with a shared CacheDir the cache key knows the
regex-found headers only (there is no depfile yet), as before depfiles.
"""
from __future__ import annotations

import os

import SCons.Action
import SCons.Errors
import SCons.Node
import SCons.Scanner
import SCons.Subst

import iree_kernels
from iree_kernels.core import depfiles
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import not_regular, write_atomically

DEPFILE_SUFFIX = ".d"
_STORE_AFTER_RESCAN = 7          # our index in SCons.Node.store_info_map


def _store_after_rescan(node) -> None:
    """Read the kernel's dependencies from the depfile just written, then record them."""
    if node.get_state() == SCons.Node.executed and not hasattr(node, "binfo"):
        # Only this target: resetting a peer would drop the record it has just stored.
        node.implicit = None
        node.scan()
    SCons.Node.store_info_file(node)


SCons.Node.store_info_map[_STORE_AFTER_RESCAN] = _store_after_rescan


def _canonical_depfile(target, source, env):
    depfile = target[1].get_abspath()
    with open(depfile, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    try:
        written = depfiles.canonical(text, target[0].name, target[1].get_path())
    except UserError as e:
        raise SCons.Errors.BuildError(node=target[1], errstr=str(e), exitstatus=2) from None
    write_atomically(depfile, written.encode("utf-8", errors="surrogateescape"))


# The second action of a kernel builder: the depfile rewritten naming the kernel.
CANONICAL_DEPFILE = SCons.Action.Action(_canonical_depfile, None)


def depfile_emitter(target, source, env):
    """Add ``<kernel>.d`` as a second target; both record dependencies read from it."""
    kernel = target[0]
    depfile = kernel.dir.File(kernel.name + DEPFILE_SUFFIX)   # Dir.File: not substituted
    for node in (kernel, depfile):
        node.store_info = _STORE_AFTER_RESCAN
    return [kernel, depfile, *target[1:]], source


def depfile_scanner(name: str, suffixes: list[str], path_variable: str):
    """The target scanner of a kernel builder: the depfile's files, or the regex scan without one."""
    fallback = include_scanner(name + "Fallback", suffixes, path_variable)

    def scan(node, env, path):
        if node.get_suffix() == DEPFILE_SUFFIX:
            return []
        depfile = node.dir.File(node.name + DEPFILE_SUFFIX)
        if not os.path.isfile(depfile.get_abspath()):
            # Not the executor's scanner path: a dry run (-n) has released it by now.
            def path(scanner):
                return scanner.path(env, getattr(node, "cwd", None), [node], node.sources)
            return [dep for source in node.sources
                    for dep in source.get_implicit_deps(env, fallback, path)]
        return _read(depfile, node, env)

    return SCons.Scanner.Scanner(scan, name=name)


# A kernel builder's source scanner: none (the target scanner does the work), so that SCons's
# default C scanner does not scan .c kernels too.
NO_SOURCE_SCANNER = SCons.Scanner.Scanner(lambda node, env, path: [], name="NoSourceScanner")


def _read(depfile, node, env) -> list:
    try:
        paths = depfiles.dependencies(depfile.get_text_contents(), depfile.get_path())
    except UserError as e:
        raise SCons.Errors.UserError(str(e)) from None
    top, sources = env.Dir("#"), {s.get_abspath() for s in node.sources}
    found = []
    for path in paths:
        absolute = os.path.join(top.get_abspath(), path)
        if absolute in sources:
            continue
        why = not_regular(absolute)
        if why == "not found":        # gone since: the stored list differs, so the kernel rebuilds
            continue
        if why:
            raise SCons.Errors.UserError(f"{path}: an included file is {why}, not a regular file")
        found.append(top.File(path) if not os.path.isabs(path) else env.fs.File(path))
    return found


_INCLUDE_RE = r'^[ \t]*#[ \t]*include[ \t]*(<|")([^>"]+)(>|")'


class _IncludeScanner(SCons.Scanner.ClassicCPP):
    """ClassicCPP reading regular files only: a FIFO named like a header would block the build."""

    def find_include_names(self, node):
        why = not_regular(node.abspath)
        if why and why != "not found":
            raise SCons.Errors.UserError(f"{node}: an included file is {why}, not a regular file")
        return super().find_include_names(node)


def package_include(env, scan_variable: str, path_variable: str) -> None:
    """Put the package's include folder (``iree_kernels/grid.cuh``, ``.glsl``) after ``$path_variable``.

    On the command line as ``$IREE_KERNELS_INCFLAG``, inside ``$( $)``: where
    the package is installed is not part of any signature (a shared cache hits
    across checkouts and virtual environments); the headers' content is,
    through the scanner searching ``$scan_variable``.
    """
    folder = iree_kernels.include_path()
    relative = os.path.relpath(folder)
    word = relative if not relative.startswith("..") else folder
    env.SetDefault(IREE_KERNELS_INCFLAG=SCons.Subst.Literal("-I" + word))
    # A node, not a string: the folder's path is never substituted.
    env.SetDefault(**{scan_variable: [f"${path_variable}", env.fs.Dir(folder)]})


def include_scanner(name: str, suffixes: list[str], path_variable: str):
    """A scanner of C-style #include lines, searching beside the file, then $path_variable."""
    return _IncludeScanner(name, suffixes, path_variable, _INCLUDE_RE)
