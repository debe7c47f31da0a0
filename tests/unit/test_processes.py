"""core/processes.run: the one way a program is started; past its limit it ends with its children."""
from __future__ import annotations

import os
import sys
import time

import pytest

from iree_kernels.core import processes


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_output_exit_status_and_input_come_back():
    done = processes.run(python("import sys; print(sys.stdin.read().upper()); "
                                "print('e', file=sys.stderr); sys.exit(3)"), limit=60, input="hi")
    assert (done.returncode, done.stdout, done.stderr, done.output) == (3, "HI\n", "e\n", "HI\ne\n")


def test_standard_error_merges_into_standard_output_where_asked():
    done = processes.run(python("import sys; print('o'); sys.stdout.flush(); "
                                "print('e', file=sys.stderr)"), limit=60, stderr=processes.STDOUT)
    assert (done.stdout, done.stderr) == ("o\ne\n", None)


def test_a_program_reads_nothing_unless_given_a_file(tmp_path):
    assert processes.run(python("import sys; print(repr(sys.stdin.read()))"),
                         limit=60).stdout == "''\n"
    (tmp_path / "in.txt").write_text("given")
    assert processes.run(python("import sys; print(sys.stdin.read())"), limit=60,
                         stdin=tmp_path / "in.txt").stdout == "given\n"


def _gone(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"     # a zombie has ended
    except FileNotFoundError:
        return True


def test_a_program_past_its_limit_is_killed_with_the_processes_it_started(tmp_path):
    pids = tmp_path / "pids"
    code = ("import subprocess, sys, time\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
            f"open({str(pids)!r}, 'w').write(str(child.pid))\n"
            "print('started', flush=True)\n"
            "time.sleep(300)\n")
    with pytest.raises(processes.TimeLimit) as e:
        processes.run(python(code), limit=3)
    assert e.value.limit == 3 and e.value.output == "started\n"
    child = int(pids.read_text())
    for _ in range(100):                  # SIGKILL is delivered, not awaited: let it land
        if _gone(child):
            break
        time.sleep(0.05)
    assert _gone(child)


def test_a_program_that_cannot_start_is_an_os_error(tmp_path):
    with pytest.raises(OSError):
        processes.run([str(tmp_path / "missing")], limit=10)



def test_what_only_people_read_is_kept_to_its_start_and_end():
    # A tool printing 300 MB was read whole (5.7 GB held) and echoed in a 600 MB error line.
    import sys
    from iree_kernels.core import processes
    printing = ("import sys\nsys.stdout.write('first line\\n')\n"
                "for _ in range(50): sys.stdout.write('x' * (1 << 20))\n"
                "sys.stderr.write('\\nlast line\\n')\n")
    finished = processes.run([sys.executable, "-c", printing], limit=60,
                             stderr=processes.STDOUT, keep=1 << 20)
    assert finished.returncode == 0
    assert finished.stdout.startswith("first line\n")
    assert finished.stdout.endswith("\nlast line\n")
    assert "bytes of output not shown ...]" in finished.stdout
    assert len(finished.stdout) < (1 << 20) + (1 << 18) + 100


def test_a_failed_tools_long_output_is_cut_in_its_message():
    from iree_kernels.core.errors import SHOWN_OUTPUT
    from iree_kernels.core.toolchains import ToolFailed
    failed = ToolFailed("tool failed", "start\n" + "y" * (10 * SHOWN_OUTPUT) + "\nend")
    assert len(failed.message) < 2 * SHOWN_OUTPUT and failed.message.endswith("\nend")
    assert "characters not shown ...]" in failed.message and len(failed.printed) > 10 * SHOWN_OUTPUT
