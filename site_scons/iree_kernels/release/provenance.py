"""Where a release comes from: its timestamp and the state of the checkout it was made in.

SOURCE_DATE_EPOCH (the variable, else the last git commit's time, else 0)
stamps every member of an archive; ``checkout_state`` is what the lock record
says of the checkout: its git commit and its uncommitted changes, and the one
line refusing a release of a dirty checkout.

Not for: the lock record itself (``lock``), writing or reading archives
(``archive``), comparing a checkout with a release (``compare``).
"""
from __future__ import annotations

from pathlib import Path

from iree_kernels.core import processes
from iree_kernels.core.errors import UserError


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
        result = processes.run(["git", "-C", str(root), "log", "-1", "--format=%ct"], limit=30)
    except (OSError, processes.TimeLimit):
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
        head = processes.run([*git, "rev-parse", "--verify", "-q", "HEAD"], limit=timeout)
        if head.returncode != 0 and not _in_work_tree(git, timeout):
            return {"git": NOT_A_REPOSITORY}
        status = processes.run([*git, "status", "--porcelain=v1", "-z", "--untracked-files=all",
                                "--", "."], limit=timeout)
    except FileNotFoundError:
        return {"git": NOT_A_REPOSITORY + " (no git program)"}
    except processes.TimeLimit:
        raise UserError(f"release: git did not describe the checkout {root} within {timeout:g} s "
                        "(its commit and uncommitted changes go into the lock record)") from None
    if status.returncode != 0:
        raise UserError(f"release: git status failed in {root}: "
                        f"{status.stderr.strip().splitlines()[-1:] or status.returncode}")
    changes = _porcelain(status.stdout)
    return {"commit": head.stdout.strip() if head.returncode == 0 else "none (no commit yet)",
            "dirty": bool(changes), "changes": changes}


def _in_work_tree(git: list[str], timeout: float) -> bool:
    inside = processes.run([*git, "rev-parse", "--is-inside-work-tree"], limit=timeout)
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
