"""What the build knows about importing ONNX models: why an import failed, what made it.

The import itself is a build step (``site_scons/site_tools/onnx_import.py``)
running IREE's importer; this module only reads its output and names the
packages whose versions decide what it writes. It does not import ``onnx``.
"""
from __future__ import annotations

import re
from functools import lru_cache

# What a failed import says when the onnx package is missing, and what to do about it.
INSTALL_HINT = ("the importer needs the onnx package beside iree-base-compiler "
                "(pip install onnx==1.23.2; ./setup.sh installs it)")
IMPORTER_PACKAGES = ("iree-base-compiler", "onnx")


def failure_reason(output: str, limit: int = 400) -> str:
    """The message a failed import ends with, on one line.

    For a Python traceback: the exception (the lines after the last indented
    frame line), without its module path (``DecodeError: ...``). Otherwise the
    last line. '' where there was no output.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    start = len(lines) - 1
    if any(line.startswith("Traceback") for line in lines):
        while start > 0 and not lines[start - 1].startswith((" ", "\t")):
            start -= 1
    reason = " ".join(line.strip() for line in lines[start:])
    reason = re.sub(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?:Error|Exception)\b)", "", reason)
    if "No module named 'onnx'" in reason:
        reason += f"; {INSTALL_HINT}"
    return reason if len(reason) <= limit else reason[:limit - 3] + "..."


@lru_cache(maxsize=None)
def importer_versions() -> str:
    """The installed versions of the packages the default importer is made of."""
    import importlib.metadata        # here: every scons run loads this module, few import ONNX
    found = []
    for package in IMPORTER_PACKAGES:
        try:
            found.append(f"{package}=={importlib.metadata.version(package)}")
        except importlib.metadata.PackageNotFoundError:
            found.append(f"{package} not installed")
    return ", ".join(found)
