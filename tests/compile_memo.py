#!/usr/bin/env python3
"""A memo of iree-compile for the test suite: a compile the run has already done is answered
from its recorded outputs instead of being done again.

Most e2e tests build the same small models in fresh folders, so most of the suite's
iree-compile runs repeat one made earlier in the run. conftest writes this file, with
``REAL`` and ``STORE`` filled in, as the program ``$IREE_COMPILE`` names (the library
passes tools a clean environment, so the two are written into the program, not passed).

The key of a compile is what the compiler reads: its argv with ``@file`` flag files
expanded, with each path that names a file or folder replaced by its name and the SHA-256
of its bytes (a folder: of every file in it), the same for every path written between
quotes in an input (``#hal.executable.object<{path = ...}>``) that names a file, and the
size and time of the compiler itself. The outputs (``-o`` and the folders ``--...-to=``
flags name) are not part of the key. Only a compile that exits 0 is recorded, and only
when nothing it wrote or printed holds its working folder or a folder of its argv (then
its bytes depend on where it ran). Anything else runs the compiler, unrecorded: a flag
that dumps somewhere else, no ``-o``; ``--version`` goes to the compiler before anything
is imported. What it reads from stdin (``-``) is keyed by its bytes, as a file is.

Standard library only: it runs with ``python -S``, once per compile.
"""
from __future__ import annotations

import os
import sys

REAL = ""       # the iree-compile it stands for
STORE = ""      # the folder of recorded compiles, shared by the run's workers

if __name__ == "__main__" and "--version" in sys.argv[1:]:
    # Asked once per fresh build folder (a thousand times a run): straight to the compiler,
    # before the imports below (two thirds of this program's start).
    os.execv(REAL, [REAL, *sys.argv[1:]])

import hashlib      # noqa: E402
import json         # noqa: E402
import re           # noqa: E402
import shlex        # noqa: E402
import shutil       # noqa: E402
import signal       # noqa: E402
import subprocess   # noqa: E402
import tempfile     # noqa: E402
import time         # noqa: E402

STARTED = KEYED = time.monotonic()
VERSION = 1     # of the key and the record's layout


class Unrecorded(Exception):
    """A compile the memo neither answers nor records: it runs as it is."""


def file_digest(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def path_digest(path: str) -> str:
    """SHA-256 of a file's bytes, or of every file under a folder with its relative path."""
    if os.path.isfile(path):
        return file_digest(path)
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(path):
        subfolders.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            digest.update(os.path.relpath(full, path).encode() + b"\0")
            digest.update(file_digest(full).encode() if os.path.isfile(full) else b"?")
    return digest.hexdigest()


def expand(argv: list[str], cwd: str, key: list) -> list[str]:
    """argv with each ``@file`` replaced by the flags in it (as LLVM reads them), recursively."""
    expanded = []
    for token in argv:
        if token.startswith("@") and os.path.isfile(os.path.join(cwd, token[1:])):
            path = os.path.join(cwd, token[1:])
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
            key.append(["@", file_digest(path)])
            expanded += expand(shlex.split(text), os.path.dirname(path) or cwd, key)
        elif token.startswith("@"):
            raise Unrecorded(f"{token}: a flag file it cannot read")
        else:
            expanded.append(token)
    return expanded


def spelled(path: str, cwd: str) -> str:
    """How a path is named in the key: relative to the working folder where it is inside it (a
    compiler may print it), else by its name alone; a scratch folder (the library's ``.tmp-``
    ones, the relink's in /tmp) differs each run, so it is left out."""
    relative = os.path.relpath(os.path.join(cwd, path), cwd)
    if relative.startswith(".."):
        return os.path.basename(path.rstrip("/"))
    return "/".join(".tmp" if part.startswith(".tmp-") else part for part in relative.split("/"))


def value_key(value: str, cwd: str, read: list[str]) -> list:
    """A flag's value, each ``=`` or ``,`` separated part naming a path as (name, digest);
    the MLIR files it names (in a folder too) are added to ``read``."""
    parts = []
    for part in re.split(r"([=,])", value):
        path = os.path.join(cwd, part) if part not in ("", "=", ",") else ""
        if path and os.path.exists(path):
            parts.append([spelled(part, cwd), path_digest(path)])
            read += [path] if os.path.isfile(path) else [
                os.path.join(folder, name) for folder, _, names in sorted(os.walk(path))
                for name in sorted(names)]
        else:
            parts.append(part)
    return parts


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def referenced(text: bytes, bases: list[str]) -> list:
    """(string, digest) for each string between two quotes in ``text`` that names a file (from
    ``bases``). Every stretch between two quotes is tried, so an escaped or empty string
    cannot shift which ones are read as strings."""
    found = []
    stretches = set(text.split(b'"')[1:-1])
    for stretch in sorted(stretches):
        if len(stretch) > 4096 or b"\n" in stretch or stretch.startswith(b"0x") or \
                b"/" not in stretch and b"." not in stretch:
            continue
        name = stretch.decode(errors="surrogateescape")
        for base in bases:
            candidate = os.path.join(base, name)
            if os.path.isfile(candidate):
                found.append([name, file_digest(candidate)])
                break
    return found


class Compile:
    """One iree-compile run: its key, and where it writes."""

    def __init__(self, argv: list[str], cwd: str, stdin: bytes | None = None) -> None:
        """``stdin``: what it reads from standard input, where an input is ``-``."""
        if not argv or "--version" in argv:
            raise Unrecorded("prints its version")
        st = os.stat(REAL)
        key: list = [VERSION, st.st_size, st.st_mtime_ns]
        tokens = expand(argv, cwd, key)
        self.output, self.folders, self.cwd = "", [], cwd
        self.named = {os.path.dirname(t.split("=")[-1]) for t in tokens
                      if os.path.isabs(t.split("=")[-1])} - {"", "/"}
        read, bases = [], [cwd]
        index = 0
        while index < len(tokens):
            token = tokens[index]
            if token == "-o" and index + 1 < len(tokens):
                self.output = os.path.join(cwd, tokens[index + 1])
                key.append("-o")
                index += 2
                continue
            name, equals, value = token.partition("=")
            if token == "-":
                if stdin is None:
                    raise Unrecorded("reads stdin")
                key.append(["-", hashlib.sha256(stdin).hexdigest()])
            elif token.startswith("-") and name.endswith("-to") and equals:
                self.folders.append(os.path.join(cwd, value))
                key.append(name)
            elif token.startswith("-") and ("dump" in name or name.startswith("-o") or (
                    "-file" in name and not os.path.isfile(os.path.join(cwd, value)))):
                raise Unrecorded(f"{name} writes somewhere else")
            elif token.startswith("-"):
                if name.endswith("search-path") and os.path.isdir(os.path.join(cwd, value)):
                    bases.append(os.path.join(cwd, value))
                key.append([name, value_key(value, cwd, read)] if equals else name)
            else:
                path = os.path.join(cwd, token)
                if not os.path.isfile(path):
                    raise Unrecorded(f"{token} is not a file")
                with open(path, "rb") as f:
                    text = f.read()
                key.append([spelled(token, cwd), hashlib.sha256(text).hexdigest()])
                # What the input links by path (the objects of its executables).
                key.append(referenced(text, [*bases, os.path.dirname(path)]))
            index += 1
        if not self.output or self.output.endswith(os.sep + "-"):
            raise Unrecorded("no -o")
        # What an MLIR file a flag names (a substituted wrapper) links by path.
        for path in read:
            if path.endswith(".mlir"):
                key.append(referenced(read_bytes(path), [*bases, os.path.dirname(path)]))
        if stdin is not None:
            key.append(referenced(stdin, bases))
        self.key = hashlib.sha256(json.dumps(key).encode()).hexdigest()

    def files(self) -> dict[str, tuple[int, int]]:
        """(time, size) of every file under the output folders, by path."""
        seen = {}
        for folder in self.folders:
            for root, _, names in os.walk(folder):
                for name in names:
                    st = os.stat(os.path.join(root, name))
                    seen[os.path.join(root, name)] = (st.st_mtime_ns, st.st_size)
        return seen

    def record(self, before: dict, out: bytes, err: bytes) -> str:
        """Keep what the compile wrote and printed under STORE/key (all or nothing)."""
        written = {"-o": self.output}
        for number, folder in enumerate(self.folders):
            for path, stamp in self.files().items():
                if path.startswith(folder + os.sep) and before.get(path) != stamp:
                    written[f"{number}/{os.path.relpath(path, folder)}"] = path
        blobs = {}
        for name, path in written.items():
            with open(path, "rb") as f:
                blobs[name] = f.read()
        here = [self.cwd.encode(), *(folder.encode() for folder in self.named)]
        if any(place in blob for blob in (*blobs.values(), out, err) for place in here):
            return "compiled where it ran"     # its bytes would differ in another folder
        os.makedirs(STORE, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=".tmp-", dir=STORE)
        for number, (name, blob) in enumerate(blobs.items()):
            with open(os.path.join(scratch, str(number)), "wb") as f:
                f.write(blob)
        with open(os.path.join(scratch, "record.json"), "w") as f:
            json.dump({"files": list(blobs), "out": out.decode("latin-1"),
                       "err": err.decode("latin-1")}, f)
        try:
            os.rename(scratch, os.path.join(STORE, self.key))
        except OSError:                 # another worker recorded it first
            shutil.rmtree(scratch, ignore_errors=True)
        return "recorded"

    def replay(self) -> bool:
        """Write and print what the recorded compile did; False where none is recorded."""
        entry = os.path.join(STORE, self.key)
        try:
            with open(os.path.join(entry, "record.json")) as f:
                record = json.load(f)
        except OSError:
            return False
        for number, name in enumerate(record["files"]):
            if name == "-o":
                path = self.output
            else:
                folder, _, relative = name.partition("/")
                path = os.path.join(self.folders[int(folder)], relative)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(os.path.join(entry, str(number)), "rb") as source, open(path, "wb") as f:
                f.write(source.read())
        sys.stdout.buffer.write(record["out"].encode("latin-1"))
        sys.stderr.buffer.write(record["err"].encode("latin-1"))
        return True


def tally(outcome: str, key: str = "-") -> None:
    """One line in STORE/tally per compile: the seconds this program took, the key's share of
    them, the key, then replayed, recorded, or why it ran unrecorded."""
    try:
        os.makedirs(STORE, exist_ok=True)
        with open(os.path.join(STORE, "tally"), "a") as f:
            f.write(f"{time.monotonic() - STARTED:.3f} {KEYED - STARTED:.3f} {key} "
                    + outcome.replace("\n", " ") + "\n")
    except OSError:
        pass


def main(argv: list[str]) -> int:
    global KEYED
    cwd = os.getcwd()
    stdin = sys.stdin.buffer.read() if "-" in argv else None
    try:
        compiled = Compile(argv, cwd, stdin)
        KEYED = time.monotonic()
    except (Unrecorded, OSError, ValueError) as why:
        tally(f"unrecorded {why}")
        if stdin is None:
            os.execv(REAL, [REAL, *argv])
        return exit_as(run_as_real(argv, stdin))
    if compiled.replay():
        tally("replayed", compiled.key)
        return 0
    before = compiled.files()
    done = run_as_real(argv, stdin)
    if done.returncode == 0:
        try:
            tally(compiled.record(before, done.stdout, done.stderr), compiled.key)
        except OSError as why:          # not recorded: the next one compiles
            tally(f"failed to record {why}")
    else:
        tally("failed")
    return exit_as(done)


def run_as_real(argv: list[str], stdin: bytes | None) -> subprocess.CompletedProcess:
    """Run the real compiler, printing what it prints."""
    done = subprocess.run([REAL, *argv], input=stdin, capture_output=True)
    sys.stdout.buffer.write(done.stdout)
    sys.stderr.buffer.write(done.stderr)
    return done


def exit_as(done: subprocess.CompletedProcess) -> int:
    """The compiler's exit status; killed by a signal, so is this program."""
    if done.returncode < 0:
        sys.stdout.flush()
        sys.stderr.flush()
        signal.signal(-done.returncode, signal.SIG_DFL)
        os.kill(os.getpid(), -done.returncode)
    return done.returncode


def summary(store: str) -> str:
    """One line on what the memo did in a run, from STORE/tally; '' where it did nothing."""
    try:
        with open(os.path.join(store, "tally")) as f:
            lines = [line.rstrip("\n").split(" ", 3) for line in f]
    except OSError:
        return ""
    took = {key: float(seconds) for seconds, _, key, outcome in lines if outcome == "recorded"}
    replayed = [key for _, _, key, outcome in lines if outcome == "replayed"]
    keying = sum(float(keyed) for _, keyed, key, _ in lines if key != "-")
    return (f"iree-compile memo: {len(replayed)} compiles replayed (they took "
            f"{sum(took.get(key, 0) for key in replayed):.0f} s when recorded), {len(took)} "
            f"recorded, {sum(o.startswith('unrecorded') for *_, o in lines)} run unrecorded; "
            f"{keying:.0f} s spent keying")


def program(real: str, store: str, python: str = sys.executable) -> str:
    """This file as a program standing for ``real``, recording under ``store``."""
    with open(__file__) as f:
        text = f.read().split("\n", 1)[1]
    text = text.replace('\nREAL = ""', f"\nREAL = {real!r}", 1)
    text = text.replace('\nSTORE = ""', f"\nSTORE = {store!r}", 1)
    return f"#!{python} -S\n{text}"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
