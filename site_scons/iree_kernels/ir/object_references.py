"""The files an MLIR kernel links as objects: ``#hal.executable.object<{path = ...}>``.

Not for whether those files exist or where they are searched
(``iree_kernels.project.kernel_objects``).
"""
from __future__ import annotations

import re

OBJECT_PATH_RE = re.compile(r"#hal\.executable\.object<\{[^}]*?path\s*=\s*\"([^\"]*)\"")
# An object read from its file; one whose data is embedded (a codegen cache stand-in) reads none.
_LINKED_FILE_RE = re.compile(r"#hal\.executable\.object<\{(?:(?!data\s*=)[^}])*?path\s*=\s*\"([^\"]+)\""
                             r"(?:(?!data\s*=)[^}])*\}>")


def object_paths(mlir: str) -> list[str]:
    """The files MLIR links as objects (``#hal.executable.object<{path = ...}>``), in order."""
    return list(dict.fromkeys(m.group(1) for m in _LINKED_FILE_RE.finditer(mlir)))

