"""What the build knows about importing torch programs (``.pt2``): the importer script, what made it.

A ``.pt2`` source is a ``torch.export.save`` of a ``torch.export.export``:
the build imports it with iree-turbine (``data/import_torch.py``, run by the
Python running SCons, in the tool ``site_scons/site_tools/torch_import.py``).
This module only names the script and the packages whose versions decide
what it writes; it does not import torch.
"""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent / "data" / "import_torch.py"
IMPORTER_PACKAGES = ("iree-turbine", "torch", "iree-base-compiler")


@lru_cache(maxsize=None)
def importer_versions() -> str:
    """The installed versions of the packages the importer script runs."""
    import importlib.metadata
    found = []
    for package in IMPORTER_PACKAGES:
        try:
            found.append(f"{package}=={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    return ", ".join(found)
