"""Checking a checkout against a release: file by file and tool by tool, and why a module differs.

Compares the lock record of a release with the lock entries this checkout
would write, and tells, per module, which recorded input, flag file or tool
version differs; the report ``scons verify-release`` prints.

Not for: reading the archive (``archive``), making the lock entries
(``lock``), rebuilding anything (the glue is ``site_tools/iree_release.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

from iree_kernels.release.archive import Release
from iree_kernels.release.lock import FILE_ROLES


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
