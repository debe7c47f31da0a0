"""Release archives: the built modules plus a lock record of what made them, and checking a checkout against one.

A release is one gzip'd tar holding every module at its repo-relative path and
``lock.json``: per module and target, the model, every substituted file (the
manifest's kernel, what the build compiled it to, the wrapper iree-compile
was given), the flag files iree-compile read, the versions of the programs
that made the module, and the SHA-256 of each file; and the checkout's git
commit with its uncommitted changes (``checkout_state``). Archives are bit-for-bit reproducible: members sorted,
owners and modes normalized, every timestamp SOURCE_DATE_EPOCH.

This module hashes, writes and compares; it compiles nothing and knows nothing
of SCons (the glue is ``site_tools/iree_release.py``).
"""
from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import NotRegularFile, open_file
from iree_kernels.module.substitution import read_record

LOCK_FORMAT = 1
LOCK_MEMBER = "lock.json"
MEMBER_MODE = 0o644


def sha256_file(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- the timestamp -----------------------------------------------------------

def parse_epoch(text: str) -> int:
    try:
        epoch = int(text.strip())
    except ValueError:
        epoch = -1
    if epoch < 0:
        raise UserError(f"SOURCE_DATE_EPOCH must be a whole number of seconds since 1970, "
                        f"not '{text}'")
    return epoch


def git_commit_time(root: str | Path) -> int | None:
    """The committer time of the last commit of the git repository holding ``root``, if any."""
    root = Path(root).resolve()
    if not any((d / ".git").exists() for d in (root, *root.parents)):
        return None
    try:
        result = subprocess.run(["git", "-C", str(root), "log", "-1", "--format=%ct"],
                                capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = result.stdout.strip()
    return int(text) if result.returncode == 0 and text.isdigit() else None


def source_date_epoch(root: str | Path, environ, commit_time=git_commit_time) -> int:
    """$SOURCE_DATE_EPOCH, else the last git commit's time, else 0."""
    text = environ.get("SOURCE_DATE_EPOCH", "")
    if text.strip():
        return parse_epoch(text)
    found = commit_time(root)
    return found if found is not None else 0


# --- the checkout ------------------------------------------------------------

NOT_A_REPOSITORY = "not a git repository"


def checkout_state(root: str | Path, timeout: float = 30) -> dict:
    """What the lock records of the checkout at ``root``: its git commit and uncommitted changes.

    ``{"commit": ..., "dirty": bool, "changes": ["M kernels/k.c", "?? new.toml"]}``
    (``git status --porcelain`` of ``root``, untracked files included, ignored
    ones not), or ``{"git": NOT_A_REPOSITORY}`` where ``root`` is in no git work
    tree, or git is not installed. The same in every clean clone of one commit.
    A git that does not answer within ``timeout`` seconds is a UserError.
    """
    root = Path(root).resolve()
    git = ["git", "-C", str(root), "-c", "core.fsmonitor=false"]   # runs no hook of the repo's
    try:
        head = subprocess.run([*git, "rev-parse", "--verify", "-q", "HEAD"], capture_output=True,
                              text=True, timeout=timeout)
        if head.returncode != 0 and not _in_work_tree(git, timeout):
            return {"git": NOT_A_REPOSITORY}
        status = subprocess.run([*git, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                                 "--", "."], capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        return {"git": NOT_A_REPOSITORY + " (no git program)"}
    except subprocess.TimeoutExpired:
        raise UserError(f"release: git did not describe the checkout {root} within {timeout:g} s "
                        "(its commit and uncommitted changes go into the lock record)") from None
    if status.returncode != 0:
        raise UserError(f"release: git status failed in {root}: "
                        f"{status.stderr.strip().splitlines()[-1:] or status.returncode}")
    changes = _porcelain(status.stdout)
    return {"commit": head.stdout.strip() if head.returncode == 0 else "none (no commit yet)",
            "dirty": bool(changes), "changes": changes}


def _in_work_tree(git: list[str], timeout: float) -> bool:
    inside = subprocess.run([*git, "rev-parse", "--is-inside-work-tree"], capture_output=True,
                            text=True, timeout=timeout)
    return inside.returncode == 0 and inside.stdout.strip() == "true"


def _porcelain(text: str) -> list[str]:
    """``git status --porcelain=v1 -z`` as 'XY path' lines (a rename: 'R  new <- old')."""
    fields, changes = text.split("\0"), []
    while fields:
        entry = fields.pop(0)
        if not entry:
            continue
        code, path = entry[:2].strip() or entry[:2], entry[3:]
        if code[0] in "RC" and fields:
            path = f"{path} <- {fields.pop(0)}"
        changes.append(f"{code} {path}")
    return sorted(changes, key=lambda c: c.split(" ", 1)[1])


def dirty_refusal(state: dict) -> str:
    """The one line refusing a release of a checkout with uncommitted changes; '' where clean."""
    if not state.get("dirty"):
        return ""
    changes = state["changes"]
    shown = ", ".join(changes[:10]) + (f" and {len(changes) - 10} more" if len(changes) > 10 else "")
    return (f"release: the checkout has uncommitted changes ({shown}); commit them, or release "
            "anyway with ALLOW_DIRTY=yes (the lock record names them)")


# --- the lock record ---------------------------------------------------------

@dataclass(frozen=True)
class ModuleBuild:
    """Where the build put one module and the files describing it; paths relative to the repo root."""
    model: str
    target: str
    module: str
    record: str                 # substitutions.json
    options_flags: str
    substitution_flags: str
    tools: dict[str, str]       # program name -> what it prints for --version

    @property
    def key(self) -> str:
        return f"{self.target}/{self.model}"


def _file(root: Path, path: str) -> dict:
    try:
        return {"path": path, "sha256": sha256_file(root / path)}
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}")


def _flag_file(root: Path, path: str) -> dict:
    entry = _file(root, path)
    entry["text"] = (root / path).read_text(encoding="utf-8")
    return entry


# The files of one substitution, as substitutions.json names them: the
# manifest's kernel, what the build made of it (or the kernel itself), and in
# wrapped mode the generated hal.executable iree-compile is given.
SUBSTITUTION_FILES = {"kernel": "file", "compiled": "path", "wrapper": "wrapper",
                      "passes": "passes_file"}
FILE_ROLES = {"kernel": "kernel", "compiled": "compiled kernel", "wrapper": "wrapper",
              "passes": "pass pipelines"}


def _substitution(root: Path, recorded: dict) -> dict:
    entry = {"executable": recorded["executable"], "mode": recorded["mode"]}
    for part, key in SUBSTITUTION_FILES.items():
        if recorded.get(key) and (part == "kernel" or recorded[key] != recorded["file"]):
            entry[part] = _file(root, recorded[key])
    if recorded.get("objects"):                # an MLIR kernel may link objects of its own
        entry["objects"] = [_file(root, path) for path in recorded["objects"]]
    return entry


def module_lock(root: str | Path, build: ModuleBuild) -> dict:
    """The lock entry of one built module, read from the files the build wrote."""
    root = Path(root)
    record = read_record((root / build.record).read_text(encoding="utf-8"))
    substitutions = [_substitution(root, applied.fields) for applied in record.substitutions]
    return {"model": build.model, "target": build.target,
            "source": _file(root, record.source),
            "substitutions": sorted(substitutions, key=lambda s: s["executable"]),
            "flag_files": {"options": _flag_file(root, build.options_flags),
                           "substitutions": _flag_file(root, build.substitution_flags)},
            "tools": dict(sorted(build.tools.items())),
            "module": _file(root, build.module)}


def lock_record(modules: list[dict], epoch: int, checkout: dict | None = None) -> dict:
    """``checkout``: ``checkout_state`` of the released checkout."""
    lock = {"format": LOCK_FORMAT, "source_date_epoch": epoch,
            "modules": sorted(modules, key=lambda m: (m["target"], m["model"]))}
    if checkout is not None:
        lock["checkout"] = checkout
    return lock


def lock_text(lock: dict) -> str:
    return json.dumps(lock, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


# --- the archive -------------------------------------------------------------

def archive_bytes(members: dict[str, bytes], mtime: int) -> bytes:
    """A .tar.gz of ``members`` (name -> content) that depends on nothing but its arguments."""
    tar_buffer = io.BytesIO()
    with tarfile.open(fileobj=tar_buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            info = tarfile.TarInfo(name)
            info.size = len(members[name])
            info.mtime = mtime
            info.mode = MEMBER_MODE
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(members[name]))
    gz_buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=gz_buffer, mtime=mtime) as gz:
        gz.write(tar_buffer.getvalue())
    return gz_buffer.getvalue()


@dataclass(frozen=True)
class Release:
    """What an archive holds: its lock record and the SHA-256 of every member."""
    path: str
    lock: dict
    members: dict[str, str]


MODULE_KEYS = ("model", "target", "source", "substitutions", "flag_files", "tools", "module")


# What verify-release reads of an archive: the archive may decompress to at most
# MAX_RELEASE_BYTES and to at most MAX_RATIO times its size (a gzip bomb is refused
# early); lock.json is read whole, up to MAX_LOCK_BYTES; modules are hashed as they stream.
MAX_RELEASE_BYTES = 8 << 30
MAX_RATIO = 200
MIN_BUDGET = 256 << 20
MAX_LOCK_BYTES = 64 << 20


def _check_lock(lock: dict, path: str) -> None:
    modules = lock.get("modules")
    if not isinstance(modules, list) or not isinstance(lock.get("source_date_epoch"), int):
        raise UserError(f"{LOCK_MEMBER} lacks its modules or its source_date_epoch", file=path)
    if not modules:
        raise UserError(f"{LOCK_MEMBER} lists no modules: nothing to verify", file=path)
    seen = set()
    for index, module in enumerate(modules):
        missing = [k for k in MODULE_KEYS if not isinstance(module, dict) or k not in module]
        if missing:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} lacks {', '.join(missing)}",
                            file=path)
        key = (str(module["target"]), str(module["model"]))
        if key in seen:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} ({key[0]}/{key[1]}) is "
                            "listed twice", file=path)
        seen.add(key)
        where = module["module"]
        if not isinstance(where, dict) or not isinstance(where.get("path"), str) \
                or not isinstance(where.get("sha256"), str):
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1}'s module has no path and "
                            "sha256", file=path)
        why = unsafe_member_name(where["path"])
        if why:
            raise UserError(f"{LOCK_MEMBER}: module #{index + 1} is at {where['path']!r}, "
                            f"{why}", file=path)


def unsafe_member_name(name: str) -> str | None:
    """Why ``name`` is no member a release holds (absolute, '..', odd characters); None if fine."""
    if not name or name.startswith("/") or "\\" in name:
        return "not a relative path"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "a path with an empty, '.' or '..' part"
    if any(not c.isprintable() for c in name):
        return "a name holding a control character"
    return None


class _Bounded(io.RawIOBase):
    """What ``source`` decompresses to, OverflowError past ``budget`` bytes."""

    def __init__(self, source, budget: int) -> None:
        self._source, self._left = source, budget

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        data = self._source.read(min(len(buffer), self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise OverflowError()
        buffer[:len(data)] = data
        return len(data)


def _member_kind(info: tarfile.TarInfo) -> str:
    for test, kind in ((info.isdir, "a folder"), (info.issym, "a symbolic link"),
                       (info.islnk, "a hard link"), (info.ischr, "a character device"),
                       (info.isblk, "a block device"), (info.isfifo, "a FIFO")):
        if test():
            return kind
    return "not a regular file"


def read_release(path: str | Path) -> Release:
    """The lock record and members' SHA-256 of the archive ``path``; UserError naming it where it is no release.

    Refused: what is not a regular file (a FIFO, a device: never read), an
    archive decompressing to more than its budget, members that are not
    regular files, have unsafe names, come twice or are not named by the lock
    record, a lock record listing no module.
    """
    where = str(path)
    members, lock_data = {}, None
    try:
        with open_file(path) as raw:
            size = os.fstat(raw.fileno()).st_size
            budget = min(MAX_RELEASE_BYTES, max(MIN_BUDGET, MAX_RATIO * size))
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz, \
                    tarfile.open(fileobj=io.BufferedReader(_Bounded(gz, budget)),
                                 mode="r|") as tar:
                for info in tar:
                    why = unsafe_member_name(info.name)
                    if why:
                        raise UserError(f"member {info.name!r} is {why}", file=where)
                    if not info.isreg():
                        raise UserError(f"member {info.name} is {_member_kind(info)}, not a "
                                        "regular file", file=where)
                    if info.name in members:
                        raise UserError(f"member {info.name} is in the archive twice",
                                        file=where)
                    content = tar.extractfile(info)
                    digest = hashlib.sha256()
                    if info.name == LOCK_MEMBER:
                        if info.size > MAX_LOCK_BYTES:
                            raise UserError(f"{LOCK_MEMBER} is larger than "
                                            f"{MAX_LOCK_BYTES >> 20} MiB", file=where)
                        lock_data = content.read()
                        digest.update(lock_data)
                    else:
                        for block in iter(lambda: content.read(1 << 20), b""):
                            digest.update(block)
                    members[info.name] = digest.hexdigest()
    except FileNotFoundError:
        raise UserError("release archive not found", file=where) from None
    except NotRegularFile as e:
        raise UserError(f"the release archive {e.strerror}", file=where) from None
    except OverflowError:
        raise UserError(f"decompresses to more than {budget >> 20} MiB ({MAX_RATIO} times "
                        f"its size, at most {MAX_RELEASE_BYTES >> 30} GiB): not a release "
                        "archive this build reads", file=where) from None
    except (OSError, tarfile.TarError, EOFError, zlib.error) as e:
        raise UserError(f"not a release archive (.tar.gz): {e}", file=where) from None
    if lock_data is None:
        raise UserError(f"not a release archive: it holds no {LOCK_MEMBER}", file=where)
    try:
        lock = json.loads(lock_data)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise UserError(f"{LOCK_MEMBER} is not JSON: {e}", file=where)
    if not isinstance(lock, dict) or lock.get("format") != LOCK_FORMAT:
        raise UserError(f"{LOCK_MEMBER} is not a lock record of format {LOCK_FORMAT}",
                        file=where)
    _check_lock(lock, where)
    named = {LOCK_MEMBER, *(m["module"]["path"] for m in lock["modules"])}
    unnamed = sorted(set(members) - named)
    if unnamed:
        raise UserError(f"member {unnamed[0]} is not a module its {LOCK_MEMBER} names"
                        + (f" (nor {len(unnamed) - 1} more)" if len(unnamed) > 1 else ""),
                        file=where)
    return Release(where, lock, members)


# --- verification ------------------------------------------------------------

@dataclass(frozen=True)
class Finding:
    """One file (or tool) of one module: whether this checkout agrees with the release, and why not."""
    module: str
    subject: str
    matches: bool
    why: str = ""


def _short(digest: str) -> str:
    return digest[:12]


def _compare_file(module: str, role: str, then: dict, now: dict | None) -> Finding:
    if now is None:
        return Finding(module, then["path"], False, f"{role}: not substituted here")
    if then["path"] != now["path"]:
        return Finding(module, then["path"], False, f"{role}: this checkout uses {now['path']}")
    if then["sha256"] != now["sha256"]:
        return Finding(module, then["path"], False,
                       f"{role} differs: sha256 {_short(now['sha256'])} here, "
                       f"{_short(then['sha256'])} in the release")
    return Finding(module, then["path"], True)


def _compare_flags(module: str, role: str, then: dict, now: dict) -> Finding:
    if then["text"] == now["text"]:
        return Finding(module, then["path"], True)
    ours, theirs = now["text"].splitlines(), then["text"].splitlines()
    line = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                min(len(ours), len(theirs)))
    here = ours[line] if line < len(ours) else "(end of file)"
    there = theirs[line] if line < len(theirs) else "(end of file)"
    return Finding(module, then["path"], False,
                   f"{role} flag file differs at line {line + 1}: '{here}' here, "
                   f"'{there}' in the release")


def _compare_tools(module: str, then: dict, now: dict) -> list[Finding]:
    findings = []
    for name in sorted(set(then) | set(now)):
        subject = f"tool {name}"
        if name not in now:
            findings.append(Finding(module, subject, False, "not used here"))
        elif name not in then:
            findings.append(Finding(module, subject, False, "not used by the release"))
        elif then[name] != now[name]:
            findings.append(Finding(module, subject, False, f"version differs: '{now[name]}' "
                                    f"here, '{then[name]}' in the release"))
        else:
            findings.append(Finding(module, subject, True))
    return findings


def _compare_inputs(key: str, then: dict, now: dict) -> list[Finding]:
    findings = [_compare_file(key, "model", then["source"], now["source"])]
    current = {s["executable"]: s for s in now["substitutions"]}
    for sub in then["substitutions"]:
        found = current.pop(sub["executable"], None) or {}
        for part, role in FILE_ROLES.items():
            if part in sub:
                findings.append(_compare_file(key, f"{role} of {sub['executable']}", sub[part],
                                              found.get(part)))
        linked_now = {o["path"]: o for o in found.get("objects", [])}
        for linked in sub.get("objects", []):
            findings.append(_compare_file(key, f"object linked by {sub['executable']}", linked,
                                          linked_now.get(linked["path"])))
    for name in sorted(current):
        findings.append(Finding(key, current[name]["kernel"]["path"], False,
                                f"substitutes {name} here, which the release did not"))
    for role in ("options", "substitutions"):
        findings.append(_compare_flags(key, role, then["flag_files"][role],
                                       now["flag_files"][role]))
    return findings + _compare_tools(key, then["tools"], now["tools"])


def _compare_module(key: str, then: dict, now: dict, inputs: list[Finding],
                    members: dict[str, str]) -> Finding:
    path, expected = then["module"]["path"], then["module"]["sha256"]
    if members.get(path) != expected:
        return Finding(key, path, False, "the archive's copy does not match its lock record "
                       "(the archive was altered)")
    if now["module"]["sha256"] == expected:
        return Finding(key, path, True)
    causes = [f"{f.subject} differs" for f in inputs if not f.matches]
    why = ("; ".join(causes) if causes else
           "every recorded input, flag file and tool version matches, so something "
           "unrecorded differs (an #include'd file, a library) or the build is not "
           "reproducible here")
    return Finding(key, path, False, f"rebuilt module differs (sha256 "
                   f"{_short(now['module']['sha256'])} here, {_short(expected)} in the "
                   f"release): {why}")


def compare(release: Release, current: dict[str, dict]) -> list[Finding]:
    """Check every module of ``release`` against ``current`` (key 'target/model' -> lock entry)."""
    findings = []
    for then in release.lock["modules"]:
        key = f"{then['target']}/{then['model']}"
        now = current.get(key)
        if now is None:
            findings.append(Finding(key, then["module"]["path"], False,
                                    "this checkout does not build it (model gone, or its "
                                    "target left out of IREE_TARGETS)"))
            continue
        inputs = _compare_inputs(key, then, now)
        findings.extend(inputs)
        findings.append(_compare_module(key, then, now, inputs, release.members))
    return findings


def report(release: Release, findings: list[Finding]) -> str:
    lines = [f"verify-release: {release.path} (SOURCE_DATE_EPOCH "
             f"{release.lock['source_date_epoch']})"]
    module = None
    for f in findings:
        if f.module != module:
            module = f.module
            lines.append(f"{module}:")
        status = "ok     " if f.matches else "DIFFERS"
        lines.append(f"  {status} {f.subject}" + (f": {f.why}" if f.why else ""))
    lines.append(summary(findings))
    return "\n".join(lines) + "\n"


def summary(findings: list[Finding]) -> str:
    differ = sum(not f.matches for f in findings)
    if differ:
        return f"{differ} of {len(findings)} files and tools differ from the release"
    return f"all {len(findings)} files and tools match the release"
