"""Starts a repo that uses these tools: ``python -m iree_kernels init [DIR]``.

Writes the two-line ``SConstruct`` (README.md), ``kernels/`` with a manifest
that declares nothing (a commented example), ``models/`` and a ``.gitignore``
of what the build writes. It refuses to overwrite any file that exists, and
then writes nothing. Not for: adding models or kernels (``scons scaffold``).
"""
from __future__ import annotations

from pathlib import Path

from iree_kernels.core.errors import UserError

TEMPLATES = Path(__file__).parents[1] / "templates" / "init"
# The file written -> its template in templates/init/ (".gitignore" would be read by git there).
FILES = {
    "SConstruct": "SConstruct",
    ".gitignore": "gitignore",
    "kernels/kernels.toml": "kernels.toml",
}
FOLDERS = ("kernels", "models")


def init(root: Path) -> list[Path]:
    """Write the starting files into ``root`` (made if missing); the paths written."""
    root = Path(root)
    existing = [name for name in FILES if (root / name).exists()]
    if existing:
        raise UserError(f"{root / existing[0]}: exists; init writes only into a folder "
                            "without " + ", ".join(FILES) + " (nothing was written)")
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    written = []
    for name, template in FILES.items():
        (root / name).write_text((TEMPLATES / template).read_text())
        written.append(root / name)
    return written
