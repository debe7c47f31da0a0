"""What the build knows about importing torch programs (``.pt2``): the importer script, what made it.

A ``.pt2`` source is a ``torch.export.save`` of a ``torch.export.export``:
the build imports it with iree-turbine (``data/import_torch.py``, run by the
Python running SCons, in the tool ``site_scons/site_tools/torch_import.py``).
This module only names the script and the packages whose versions decide
what it writes; it does not import torch.
"""
from __future__ import annotations

from pathlib import Path

from iree_kernels.core.toolchains import package_versions

SCRIPT = Path(__file__).resolve().parents[1] / "data" / "import_torch.py"
IMPORTER_PACKAGES = ("iree-turbine", "torch", "iree-base-compiler")


def importer_versions() -> str:
    """The installed versions of the packages the importer script runs."""
    return package_versions(IMPORTER_PACKAGES)
