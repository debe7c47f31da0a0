"""A kernel language is one file: its kind (``iree_kernels/kinds/<language>.py``), its SCons tool
(``site_tools/``) and its templates. No other library file names a kind's suffix or its own
manifest fields, nor a language with fields of its own by name: the rest asks the kind.

MLIR's suffix is IREE's own format too (dumps, wrappers, sources): it is not held to it.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from iree_kernels.kinds.registry import KERNEL_KINDS

SITE = REPO / "site_scons"
KINDS = SITE / "iree_kernels" / "kinds"
LIBRARY = sorted([*(SITE / "iree_kernels").rglob("*.py"), *(SITE / "site_tools").glob("*.py")])
# IREE's own formats as well as kinds' suffixes.
IREE_FORMATS = (".mlir",)
# Generic code that names a suffix for another reason than the kind: (file, literal) -> why.
GENERIC = {
    ("site_tools/iree_substitutions.py", ".spv"):
        "IreeSpirvEntryPoint renames any SPIR-V's entry point (KernelKind.entry_point_main)",
    ("iree_kernels/module/codegen_cache.py", ".ptx"): "IREE's own binary for cuda",
    ("iree_kernels/module/codegen_cache.py", ".spv"): "IREE's own binary for vulkan",
    ("iree_kernels/__init__.py", ".py"): "the package's own code, in its fingerprint",
    ("iree_kernels/kinds/registry.py", "triton"): "the table registers every language",
}


def _language_file(suffix: str) -> Path:
    """The kinds/ module that declares the kind of ``suffix``."""
    found = [path for path in KINDS.glob("*.py")
             if re.search(rf'KernelKind\(\s*"{re.escape(suffix)}"', path.read_text())]
    assert len(found) == 1, f"{suffix}: declared in {found}"
    return found[0]


def _own_files(suffix: str) -> set[Path]:
    """The kind's file, its language's other kinds/ files (its compiler half) and the tools of
    the kinds it is or is made from."""
    kind = KERNEL_KINDS[suffix]
    language = _language_file(suffix)
    files = {language, *KINDS.glob(f"{language.stem}_*.py")}
    for other in KERNEL_KINDS.values():
        made = {other.compiles_to, *dict(other.compiles_for).values()}
        if other is kind or suffix in made:
            files.add(_language_file(other.suffix))
            if other.tool:
                files.add(SITE / "site_tools" / f"{other.tool}.py")
    return files


def _named(literal: str) -> re.Pattern:
    return re.compile(rf"""["']{re.escape(literal)}["']""")


def _offenders(literal: str, allowed: set[Path], pattern: re.Pattern) -> list[str]:
    return [f"{path.relative_to(SITE)}:{number}: {line.strip()}"
            for path in LIBRARY if path not in allowed
            and (path.relative_to(SITE).as_posix(), literal) not in GENERIC
            for number, line in enumerate(path.read_text().splitlines(), 1)
            if pattern.search(line)]


@pytest.mark.parametrize("suffix", [s for s in KERNEL_KINDS if s not in IREE_FORMATS])
def test_no_other_library_file_names_a_kinds_suffix(suffix):
    assert _offenders(suffix, _own_files(suffix), _named(suffix)) == []


@pytest.mark.parametrize("suffix", [s for s, k in KERNEL_KINDS.items() if k.fields])
def test_no_other_library_file_names_a_kinds_own_fields_or_its_language(suffix):
    allowed = _own_files(suffix)
    for own in KERNEL_KINDS[suffix].fields:
        assert _offenders(own.name, allowed, _named(own.name)) == [], own.name
    language = _language_file(suffix).stem
    assert _offenders(language, allowed, re.compile(rf"\b{language}", re.IGNORECASE)) == []


def test_the_grep_sees_the_files_it_should():
    assert _offenders(".py", set(), _named(".py"))           # it finds what it looks for
    assert SITE / "site_tools" / "triton_compile.py" in _own_files(".py")
    assert SITE / "site_tools" / "ptx.py" in _own_files(".ptx")     # .cu compiles to it
