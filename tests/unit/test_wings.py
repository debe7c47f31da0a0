"""The library's wings import downward only: no cycle, no import running upward.

A wing may import a wing below it, or a module of its own; two wings on the same
floor never import each other. Function-level imports are held to the same rules.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "site_scons" / "iree_kernels"

# The floors, ground first: a wing imports only from lower floors and from itself.
FLOORS = (
    ("core",),
    ("ir",),
    ("binaries", "cache", "importers", "remote"),
    ("kinds",),
    ("project",),
    ("module", "check"),
    ("perf", "release"),
    ("settings",),
    ("scons", "__main__"),
)
FLOOR_OF = {wing: number for number, wings in enumerate(FLOORS) for wing in wings}


def module_name(package: Path, path: Path) -> str:
    parts = (package.name,) + path.relative_to(package).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(package: Path, path: Path) -> list[tuple[int, str]]:
    """(line, absolute module) of every import of the package the file makes."""
    here = module_name(package, path).split(".")
    if path.name != "__init__.py":
        here = here[:-1]                    # the package a relative import starts from
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
            if base == package.name or base.startswith(package.name + "."):
                found += sorted({(node.lineno, f"{base}.{a.name}" if _is_module(
                    package, f"{base}.{a.name}") else base) for a in node.names})
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names
                      if a.name.startswith(package.name + ".")]
    return found


def _is_module(package: Path, module: str) -> bool:
    path = package.parent.joinpath(*module.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def wing_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def library_files(package: Path) -> list[Path]:
    return sorted(p for p in package.rglob("*.py") if "data" not in p.relative_to(package).parts)


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Each import that runs up, sideways between wings, or into no wing, as a line."""
    wrong = []
    for path in library_files(package):
        wing = wing_of(module_name(package, path))
        if wing is None:
            continue
        for line, module in imports(package, path):
            other = wing_of(module)
            if other is None or other == wing:
                continue
            where = f"{path.relative_to(package)}:{line}"
            if other not in FLOOR_OF or wing not in FLOOR_OF:
                wrong.append(f"{where}: {wing} imports {module}, not on a floor")
            elif FLOOR_OF[other] >= FLOOR_OF[wing]:
                wrong.append(f"{where}: {wing} (floor {FLOOR_OF[wing]}) imports {module} "
                             f"(floor {FLOOR_OF[other]})")
    return wrong


def cycles(package: Path = PACKAGE) -> list[list[str]]:
    """The import cycles between the package's modules (each as its modules)."""
    modules = {module_name(package, p): p for p in library_files(package)}
    edges = {m: sorted({i for _, i in imports(package, p) if i in modules and i != m})
             for m, p in modules.items()}
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(module: str) -> None:                 # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for other in edges[module]:
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in on_stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_every_wing_of_the_library_stands_on_a_floor():
    wings = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert wings - {"__init__"} - set(FLOOR_OF) == set()


def test_no_import_of_the_library_runs_up_or_sideways_between_wings():
    assert upward_imports() == []


def test_the_library_has_no_import_cycle():
    assert cycles() == []


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    package = tmp_path / "iree_kernels"
    for name, text in files.items():
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(text)
    return package


def test_an_import_from_a_higher_wing_is_named_with_its_file_and_line(tmp_path):
    package = _package(tmp_path, {
        "__init__.py": "", "core/__init__.py": "", "ir/__init__.py": "",
        "ir/program.py": "",
        "core/files.py": "import os\n\ndef f():\n    from ..ir import program\n"})
    assert upward_imports(package) == [
        "core/files.py:4: core (floor 0) imports iree_kernels.ir.program (floor 1)"]


def test_an_import_between_wings_of_one_floor_is_refused(tmp_path):
    package = _package(tmp_path, {
        "__init__.py": "", "cache/__init__.py": "", "importers/__init__.py": "",
        "cache/store.py": "from iree_kernels.importers import onnx_importer\n",
        "importers/onnx_importer.py": ""})
    assert upward_imports(package) == [
        "cache/store.py:1: cache (floor 2) imports iree_kernels.importers.onnx_importer "
        "(floor 2)"]


def test_a_cycle_inside_one_wing_is_found(tmp_path):
    package = _package(tmp_path, {
        "__init__.py": "", "ir/__init__.py": "",
        "ir/a.py": "from . import b\n", "ir/b.py": "from iree_kernels.ir.a import x\n"})
    assert cycles(package) == [["iree_kernels.ir.a", "iree_kernels.ir.b"]]
