"""iree_kernels.scons.spawn: the SPAWN of every step, and what it carries."""
from __future__ import annotations

import sys
from pathlib import Path

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


FAILS = ("print('models/bad.mlir:2:23: error: use of undeclared SSA value name');"
         "print('  %0 = arith.addf %a, %b');print('                      ^'); exit(1)")


def test_a_failing_tools_first_error_is_said_once_then_the_rest_of_its_output(capsys):
    assert Spawn()("sh", None, None, [sys.executable, "-c", FAILS], {}) == 1
    name = Path(sys.executable).name
    assert capsys.readouterr().out == (
        f"scons: *** {name}: models/bad.mlir:2:23: error: use of undeclared SSA value name\n"
        "  %0 = arith.addf %a, %b\n                      ^\n")
