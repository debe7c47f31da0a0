"""What a kernel kind is: the data and hooks of a kernel file of one suffix.

A kernel language is one module of this package (``registry`` lists them)
holding its kinds, plus its SCons tool
(``site_tools/``) and its skeleton template: the rest of the library asks the
kind, never names its suffix or its fields. Not for the table of kinds
(``registry``) nor for the targets (``iree_kernels.ir.targets``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

MODES = ("source", "object", "wrapped")

# Why a GPU kernel goes in object or wrapped mode, never as a source.
GPU_MODES = ("object", "wrapped")
GPU_WHY = ("a compiled kernel replaces IREE's binary (object mode) or is linked by a "
           "generated wrapper (wrapped mode); given as a source, iree-compile fails deep "
           "in its lowering")


@dataclass(frozen=True)
class KindField:
    """A manifest field only substitutions of one kind take.

    ``schema``: its JSON Schema (``description`` included), for the manifest's schema.
    """
    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True)
class Scaffold:
    """How ``scons scaffold LANGUAGE=<language>`` writes a skeleton of this kind.

    ``template``: the kernel's template (None: the executable's dumped source is
    copied); ``entry_template``: the entry's lines giving the launch shape, where
    the kind has its own; ``values(outputs)``: more the templates are given,
    ``outputs`` being the output's element count as an expression ('' unknown).
    ``constant_array``: how a constant folded into the executable is written out
    (``project.scaffold.constant_arrays``), in the types of the template's bindings.
    """
    language: str
    targets: tuple[str, ...] | None       # None: any target
    template: str | None
    mode: str
    comment: str = "//"
    default_for: tuple[str, ...] = ()     # the targets whose skeletons are in it by default
    entry_template: str = ""
    values: Callable[[str], Mapping[str, Any]] = lambda outputs: {}
    # How a folded constant is written out: (opening, closing, suffix of an f32 literal);
    # the opening takes {type}, {name} and {count}. (): it is not.
    constant_array: tuple[str, str, str] = ()


@dataclass(frozen=True)
class KernelKind:
    """What a kernel file of one suffix is, and where it may go."""
    suffix: str
    description: str
    targets: tuple[str, ...]
    default_mode: str
    modes: tuple[str, ...]
    why_not: str = ""              # why the other modes do not fit
    compiles_to: str | None = None  # the suffix of what the build makes of it
    tool: str = ""                 # the SCons tool (site_tools/) that compiles it, if any
    checker: str = ""              # the program that checks a kernel of this kind, if any
    # What checks a kernel of this kind the build is given or makes (see kernel_checks),
    # and the variables it reads: (name, default) pairs; the module's architecture
    # overrides its target's arch_variable.
    check: Callable[..., None] | None = None
    check_settings: tuple[tuple[str, str], ...] = ()
    entry_point_main: bool = False  # compiled, its entry point is 'main': renamed to the export
    # Compiled per target to another suffix than compiles_to: ((target, suffix), ...)
    compiles_for: tuple[tuple[str, str], ...] = ()
    # Compiled once per substitution, from the executable's layout: what it makes lies in
    # the module's folder, named after the substitution. ``declare(env, sub, *, source,
    # built, named, spec, listing, resolved, arch)`` declares it with the kind's own
    # builders and returns [the kernel, what says its launch shape]: ``named(suffix)`` is
    # a file of the module's folder named after the substitution, ``spec`` the
    # substitution's Value node, ``arch`` the module's architecture.
    declare: Callable[..., list] | None = None
    links_objects: bool = False    # may link files (#hal.executable.object): checked on reading
    # Wrapped: what names the kernel's function (e.g. "C function"; '' : the export's name)
    # and who takes one, as the error refusing 'function' elsewhere says it.
    function: tuple[str, str] = ()
    # Wrapped, where the manifest gives no workgroup_size: why not ('' : it gives one).
    no_workgroup_size: str = ""
    # Manifest fields of this kind's own, and ``read_fields(entry, target, error)``: their
    # values checked (defaults filled in), a mapping the substitution carries;
    # ``error(key, message)`` makes the UserError to raise.
    fields: tuple[KindField, ...] = ()
    read_fields: Callable[..., dict] | None = None
    # The check settings a substitution of this kind gives what it compiles to (a kernel
    # compiled for another architecture than the module's): ``check_overrides(sub)``.
    check_overrides: Callable[[Any], Mapping[str, str]] | None = None
    scaffold: Scaffold | None = None
    # The short progress lines of its tool's steps (NAMECOMSTR, line) when not VERBOSE.
    short_lines: tuple[tuple[str, str], ...] = ()
    # May be a family (match): compiled per executable it takes, with the facts of each
    # (kinds.gemm_interface's header on its include path).
    family: bool = False
    # Why it cannot take an executable whose facts (ir.gemm_facts.Contraction) are these,
    # or ''; None: it takes every GEMM the facts read.
    family_decline: Callable[[Any], str] | None = None
    # A line of the manifest schema's comment on it (the kinds of one language share one).
    schema_comment: str = ""
    # What the build does with it, for the docs' table of suffixes (docs/manifest.md).
    doc: str = ""

    @property
    def per_substitution(self) -> bool:
        return self.declare is not None

    def made_suffix(self, target: str) -> str | None:
        """The suffix of what the build makes of this kind of kernel for ``target``."""
        return dict(self.compiles_for).get(target, self.compiles_to)
