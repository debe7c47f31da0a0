"""Measurements of the build, printing figures; each bench runs as a module of this package
from the repository root: ``./setup.sh python -m bench.scale`` (setup.sh runs its command
there).

The package is the benches' one way in. ``python -m`` puts the repository root on sys.path,
so a bench imports the tests' helpers as ``tests.harness``, the model generators as
``models.generate_layers`` and another bench as ``bench.kernel_edits``; the library is put on
sys.path here, once, from site_scons (as SCons's --site-dir does for a build). pytest imports
the same names (pytest.ini's pythonpath).
"""
from __future__ import annotations

import sys
from pathlib import Path

_SITE = str(Path(__file__).resolve().parents[1] / "site_scons")
if _SITE not in sys.path:
    sys.path.append(_SITE)
