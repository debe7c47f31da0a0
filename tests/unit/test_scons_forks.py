"""tests/scons_forks.py: scons runs forked from a warm server behave as scons started afresh."""
from __future__ import annotations

import os
import signal
import time

import pytest

import harness
import scons_forks
from harness import SCONS, SITE_DIR, environment_with, scons


@pytest.fixture(scope="module")
def server():
    started = scons_forks.Server(SCONS, SITE_DIR, environment_with(harness.SCONS_ENVIRONMENT))
    yield started
    started.close()


def both(server, root, *args, env=None, timeout=harness.TIMEOUT, monkeypatch):
    """The same scons run started afresh and forked from ``server``."""
    monkeypatch.setattr(harness, "FORKS", None)
    fresh = scons(root, *args, env=env, timeout=timeout)
    monkeypatch.setattr(harness, "FORKS", server)
    return fresh, scons(root, *args, env=env, timeout=timeout)


def test_a_forked_run_has_the_callers_folder_environment_argv_and_exit_status(
        server, tmp_path, monkeypatch):
    (tmp_path / "SConstruct").write_text(
        "import os, sys\n"
        "print('cwd', os.getcwd(), 'X', os.environ.get('X'), 'Y', os.environ.get('Y'),"
        "      'args', ARGUMENTS.get('A'))\n"
        "print('umask', oct(os.umask(0)), 'fds', sorted(os.listdir('/proc/self/fd')))\n"
        "print('session leader', os.getsid(0) == os.getpid(), 'launched in', GetLaunchDir())\n"
        "sys.stderr.write('to stderr\\n')\n"
        "sys.stdout.write('crlf\\r\\nlone cr\\r\\u00fcn\\u00ef\\n')\n"
        "Exit(3)\n")
    monkeypatch.setenv("Y", "not for the child")
    fresh, forked = both(server, tmp_path, "A=1", env={"X": "seen", "Y": None},
                         monkeypatch=monkeypatch)
    assert fresh.returncode == forked.returncode == 3
    assert forked.stdout == fresh.stdout
    assert f"cwd {tmp_path} X seen Y None args 1" in forked.stdout
    assert "fds ['0', '1', '2', '3']" in forked.stdout     # 3: the listing's own
    assert f"session leader True launched in {tmp_path}" in forked.stdout
    assert forked.stderr == fresh.stderr == "to stderr\n"
    assert "crlf\nlone cr\n\u00fcn\u00ef\n" in forked.stdout


def test_a_forked_run_killed_by_a_signal_reads_killed_by_it(server, tmp_path, monkeypatch):
    (tmp_path / "SConstruct").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)\n")
    fresh, forked = both(server, tmp_path, monkeypatch=monkeypatch)
    assert fresh.returncode == forked.returncode == -signal.SIGSEGV


def test_a_forked_run_past_its_time_limit_is_killed_with_what_it_started(
        server, tmp_path, monkeypatch):
    pid_file = tmp_path / "sleeper.pid"
    (tmp_path / "SConstruct").write_text(
        "import subprocess, time\n"
        f"open({str(pid_file)!r}, 'w').write(str(subprocess.Popen(['sleep', '60']).pid))\n"
        "print('started', flush=True)\ntime.sleep(60)\n")
    monkeypatch.setattr(harness, "FORKS", server)
    with pytest.raises(harness.Timeout) as timeout:
        scons(tmp_path, timeout=2)
    assert timeout.value.run.returncode == -9
    assert "started" in timeout.value.run.stdout
    sleeper = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{sleeper}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{sleeper}")


def test_runs_at_once_are_forked_at_once(server, tmp_path, monkeypatch):
    """Two runs overlap (as the tests of builds sharing a cache need), each with its status."""
    import concurrent.futures
    for name, code in (("a", 4), ("b", 5)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "SConstruct").write_text(
            f"import time\ntime.sleep(1.5)\nExit({code})\n")
    monkeypatch.setattr(harness, "FORKS", server)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        runs = list(pool.map(lambda name: scons(tmp_path / name), ("a", "b")))
    assert [run.returncode for run in runs] == [4, 5]
    assert time.perf_counter() - start < 2.9


@pytest.mark.parametrize("argv, env", [
    ((str(SCONS), "--site-dir=/elsewhere", "-Q"), {}),                  # another library
    (("/other/venv/bin/scons", f"--site-dir={SITE_DIR}", "-Q"), {}),     # another SCons
    ((str(SCONS), f"--site-dir={SITE_DIR}", "-Q", "--debug=memoizer"), {}),
    ((str(SCONS), f"--site-dir={SITE_DIR}", "-Q"), {"PYTHONHASHSEED": "1"}),
    ((str(SCONS), f"--site-dir={SITE_DIR}", "-Q"), {"LC_ALL": "C"}),
    ((str(SCONS), f"--site-dir={SITE_DIR}", "-Q"), {"SCONSFLAGS": "-j4"}),
    ((str(SCONS), f"--site-dir={SITE_DIR}", "-Q"), {"PYTHONPYCACHEPREFIX": None}),
])
def test_what_is_read_as_python_or_scons_start_is_left_to_a_fresh_start(server, argv, env):
    environment = environment_with({**harness.SCONS_ENVIRONMENT, **env})
    assert not server.usable(list(argv), environment)


def test_the_suites_own_runs_are_forked(server):
    environment = environment_with({**harness.SCONS_ENVIRONMENT, "PATH": "/bin", "X": "1"})
    assert server.usable(harness.scons_argv("-n", "check"), environment)


def test_forked_runs_share_their_servers_hash_seed_and_a_fresh_one_has_its_own(
        server, tmp_path, monkeypatch):
    if os.environ.get("PYTHONHASHSEED", "random") != "random":
        pytest.skip("PYTHONHASHSEED gives every process the same seed")
    (tmp_path / "SConstruct").write_text("print('hash', hash('a string'))\n")
    monkeypatch.setattr(harness, "FORKS", server)
    forked = {scons(tmp_path).stdout for _ in range(2)}
    fresh = scons(tmp_path, fresh=True).stdout
    assert len(forked) == 1 and fresh not in forked
