"""Starts a repo that uses these tools: ``python -m iree_kernels init [DIR]``.

Writes the two-line ``SConstruct`` (README.md), ``kernels/`` with a manifest
that declares nothing (a commented example), ``models/`` and a ``.gitignore``
of what the build writes. It refuses to overwrite any file that exists, and
then writes nothing. Not for: adding models or kernels (``scons scaffold``).
"""
from __future__ import annotations

import os
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import write_new

TEMPLATES = Path(__file__).parents[1] / "templates" / "init"
# The file written -> its template in templates/init/ (".gitignore" would be read by git there).
FILES = {
    "SConstruct": "SConstruct",
    ".gitignore": "gitignore",
    "kernels/kernels.toml": "kernels.toml",
}
FOLDERS = ("kernels", "models")


def init(root: Path) -> list[Path]:
    """Write the starting files into ``root`` (made if missing); the paths written.

    Nothing is written through a link, even a dangling one, nor over any file.
    """
    root = Path(root)
    for name in (*FOLDERS, *FILES):
        path = root / name
        if path.is_symlink():
            raise UserError(f"{path}: is a symbolic link; init writes only into the folder "
                            "itself (nothing was written)")
    existing = [name for name in FILES if os.path.lexists(root / name)]
    if existing:
        raise UserError(f"{root / existing[0]}: exists; init writes only into a folder "
                            "without " + ", ".join(FILES) + " (nothing was written)")
    for folder in FOLDERS:
        (root / folder).mkdir(parents=True, exist_ok=True)
    written = []
    for name, template in FILES.items():
        try:
            write_new(root / name, (TEMPLATES / template).read_text())
        except FileExistsError:
            raise UserError(f"{root / name}: exists; init writes no file over another") from None
        written.append(root / name)
    return written
