"""Build two commits of this repo and compare what they make: every module and the release archive.

    python bench/same_artifacts.py OLD NEW [--work /tmp/same-artifacts] [-j 2]

Each commit is cloned into WORK/<commit> (kept: a second run reuses a finished build),
built with ``scons`` (every model for every target) and ``scons release``, with this
checkout's .venv. Prints one line per artifact that differs or exists on one side only,
then a summary; exits 1 where anything differs. The release's lock record names the
commit it was built from: it is compared with that field removed.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARCHIVE = "build/release/iree-kernels-release.tar.gz"


def git(*args: str, cwd: Path = REPO) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, timeout=300).stdout.strip()


def build(commit: str, work: Path, jobs: int) -> Path:
    sha = git("rev-parse", commit)
    root = work / sha[:12]
    done = root / ".built"
    if done.is_file():
        return root
    if not root.is_dir():
        subprocess.run(["git", "clone", "-q", "--no-checkout", str(REPO), str(root)], check=True,
                       timeout=300)
        git("checkout", "-q", sha, cwd=root)
    if not (root / ".venv").exists():
        (root / ".venv").symlink_to(REPO / ".venv")
        with open(root / ".git" / "info" / "exclude", "a") as exclude:
            exclude.write(".venv\n")          # a link: .gitignore's '.venv/' names a folder
    env = {**os.environ, "PATH": f"{REPO / '.venv' / 'bin'}:{os.environ['PATH']}",
           "SOURCE_DATE_EPOCH": "0"}
    for step in ([], ["release"]):
        print(f"same_artifacts: {sha[:12]}: scons {' '.join(step)}", flush=True)
        subprocess.run([str(REPO / ".venv/bin/scons"), "-Q", f"-j{jobs}", *step], cwd=root,
                       env=env, check=True, timeout=3600, stdout=subprocess.DEVNULL)
    done.write_text("")
    return root


def digests(root: Path) -> dict[str, str]:
    """sha256 of every module under build/, and of every member of the release archive."""
    found = {}
    for path in sorted((root / "build").rglob("*.vmfb")):
        if "release" not in path.relative_to(root / "build").parts:
            found[path.relative_to(root).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    with tarfile.open(root / ARCHIVE) as archive:
        for member in archive.getmembers():
            data = archive.extractfile(member).read() if member.isfile() else b""
            if member.name.endswith(".lock.json") or member.name.endswith("lock.json"):
                record = json.loads(data)
                record.pop("commit", None)
                record.get("checkout", {}).pop("commit", None) if isinstance(
                    record.get("checkout"), dict) else None
                data = json.dumps(record, sort_keys=True).encode()
            found[f"{ARCHIVE}:{member.name}"] = hashlib.sha256(
                data + repr((member.mode, member.mtime, member.uid, member.gid)).encode()).hexdigest()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--work", type=Path, default=Path("/tmp/same-artifacts"))
    parser.add_argument("-j", type=int, default=2)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    old, new = (digests(build(c, args.work, args.j)) for c in (args.old, args.new))
    differ = 0
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) != new.get(name):
            differ += 1
            side = "only in old" if name not in new else "only in new" if name not in old else "differs"
            print(f"{side}: {name}")
    print(f"same_artifacts: {len(old.keys() & new.keys()) - sum(old[n] != new[n] for n in old.keys() & new.keys())}"
          f" of {len(old.keys() | new.keys())} artifacts identical; {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
