"""The library imports without SCons: only iree_kernels.scons (the glue) and the tools need it."""
import subprocess
import sys
from pathlib import Path

LIBRARY = Path(__file__).parents[2] / "site_scons" / "iree_kernels"

# Run in a fresh interpreter where any import of SCons fails, as where it is not installed.
BLOCKED = """
import importlib, sys
class NoSCons:
    def find_spec(self, name, path=None, target=None):
        if name == "SCons" or name.startswith("SCons."):
            raise ImportError(f"{name}: SCons is not importable here")
sys.meta_path.insert(0, NoSCons())
for name in sys.argv[1:]:
    importlib.import_module(name)
"""


def library_modules() -> list[str]:
    """Every module of iree_kernels outside its SCons glue (iree_kernels.scons)."""
    names = []
    for path in sorted(LIBRARY.rglob("*.py")):
        parts = path.relative_to(LIBRARY.parent).with_suffix("").parts
        if parts[1:2] == ("scons",) or "site_tools" in parts:
            continue
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def import_without_scons(names: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCKED, *names], cwd=LIBRARY.parent,
                          capture_output=True, text=True)


def test_every_library_module_imports_without_scons():
    names = library_modules()
    assert "iree_kernels.project.manifest" in names and "iree_kernels.scons.spawn" not in names
    result = import_without_scons(names)
    assert result.returncode == 0, result.stderr


def test_the_glue_does_not_import_without_scons():
    # The blocker works: the glue, which imports SCons, fails under it.
    result = import_without_scons(["iree_kernels.scons.spawn"])
    assert result.returncode != 0 and "SCons is not importable here" in result.stderr
