"""iree_kernels.scons.spawn: the SPAWN of every step, and what it carries."""
from __future__ import annotations

import sys

from iree_kernels.scons.spawn import Spawn

REJECTS = "print('iree-compile: error: bad value for the --iree-opt-level option'); exit(1)"


def test_a_rejected_option_is_reported_where_the_spawns_record_says_it_is_set(capsys):
    spawn = Spawn(option_origins={"build/m/options.flags": {
        "iree-opt-level": "kernels/a.toml:3: [models.m]: options.llvm-cpu"}})
    status = spawn("sh", None, None, [sys.executable, "-c", REJECTS, "@build/m/options.flags"], {})
    assert status == 1
    assert capsys.readouterr().out.startswith(
        "scons: *** kernels/a.toml:3: [models.m]: options.llvm-cpu: ")


def test_option_origins_are_the_spawns_own_not_shared(capsys):
    Spawn(option_origins={"o.flags": {"iree-opt-level": "kernels/a.toml:3"}})
    Spawn()("sh", None, None, [sys.executable, "-c", REJECTS, "@o.flags"], {})
    assert "kernels/a.toml" not in capsys.readouterr().out
