"""A step as it travels to a worker: a command, the files it reads, the files it writes.

Every path is relative to the project's root, so that a worker runs the command in a folder
of its own laid out as the project is (nothing shared but the bytes). A command line's
absolute paths into the project are made relative; a tool is named, not located (the worker
runs its own, known by the same digest). Whatever else the command line names outside the
project keeps a step here (``NotRemote`` says what).
Not for: running a step (``worker``), sending it (``cluster``).
"""
from __future__ import annotations

import hashlib
import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path

# This library's folder on this machine.
LIBRARY = str(Path(__file__).resolve().parents[1])


class NotRemote(Exception):
    """A step that runs here: the reason, one line; ``said``: whether the build says it (not
    for a tool whose steps never go)."""

    def __init__(self, reason: str, said: bool = True) -> None:
        super().__init__(reason)
        self.said = said


@dataclass(frozen=True)
class Step:
    """A command to run in a folder laid out as the project.

    ``tool``/``identity``: the program's name and the digest it must have (``toolchain``);
    ``arguments``: argv after the program; ``inputs``: relative path -> SHA-256 of each file
    read; ``outputs``: the files it must write; ``output_folders``: where each file it writes
    is taken back (an output's own folder, and folders such as a dump's); ``limit``: seconds;
    ``devices``: the runtime drivers whose devices it needs.
    """
    tool: str
    identity: str
    arguments: tuple[str, ...]
    inputs: tuple[tuple[str, str], ...]
    outputs: tuple[str, ...]
    output_folders: tuple[str, ...]
    limit: float | None
    label: str = ""
    devices: tuple[str, ...] = ()           # IREE runtime drivers it runs on (cuda, vulkan)

    def __post_init__(self) -> None:
        for path in (*(p for p, _ in self.inputs), *self.outputs, *self.output_folders):
            checked_path(path)
        for argument in self.arguments:         # nothing it names lies outside its folder
            head, value = _split_path(argument)
            if head == "-I" and value.startswith(PACKAGE + "/"):
                value = value[len(PACKAGE) + 1:]        # the library's own headers, read only
            if value.startswith("/") or ".." in value.replace("=", "/").split("/") or \
                    PACKAGE in value:
                raise ValueError(f"an argument names a path outside the step's folder: "
                                 f"{argument!r}")


@dataclass(frozen=True)
class Outcome:
    """What a step left: its exit status, what it printed, the files it wrote in its output
    folders (relative path -> bytes, with their SHA-256 in ``digests``), where it ran and for
    how long its tool ran (``seconds``)."""
    returncode: int
    output: str
    files: dict[str, bytes] = field(default_factory=dict)
    digests: dict[str, str] = field(default_factory=dict)
    worker: str = ""
    seconds: float = 0.0
    timed_out: bool = False
    # Filled by the build when it takes the outcome: seconds from sending the step to taking
    # its files, and bytes of inputs sent for it (those not sent before) and of files back.
    waited: float = 0.0
    sent: int = 0
    received: int = 0
    package: str = ""           # the worker's copy of this library (a depfile may name it)


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def checked_path(path: str) -> str:
    """``path`` if it is relative, normal and inside the folder it is relative to."""
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        raise ValueError(f"not a relative path: {path!r}")
    if posixpath.normpath(path) != path or path == "." or path.split("/")[0] == "..":
        raise ValueError(f"not a normal path inside the project: {path!r}")
    return path


def relative_to(root: str, path: str) -> str | None:
    """``path`` (absolute, or relative to ``root``) relative to ``root``; None outside it."""
    absolute = os.path.normpath(os.path.join(root, path))
    relative = os.path.relpath(absolute, root)
    if relative == "." or relative.split(os.sep)[0] == "..":
        return None
    return relative.replace(os.sep, "/")


# Where an include folder of this library (its kernels' headers) stands in a command line: each
# machine puts its own copy there, of the same version as the scheduler's and the workers'.
PACKAGE = "{iree_kernels}"


def relative_arguments(arguments: list[str], root: str, package: str = "") -> tuple[str, ...]:
    """``arguments`` with the project's absolute paths made relative to its root, and
    ``-I<package>/...`` (this library's folder) written ``-I{iree_kernels}/...``.

    An argument naming an absolute path elsewhere (``/x``, ``-o/x``, ``--flag=/x``, ``@/x``)
    cannot run in a worker's folder: NotRemote.
    """
    prefix = root.rstrip("/") + "/"
    shown = []
    for argument in arguments:
        argument = argument.replace(prefix, "")
        head, value = _split_path(argument)
        if package and head == "-I" and (value + "/").startswith(package.rstrip("/") + "/"):
            value = PACKAGE + value[len(package.rstrip("/")):]
        elif value.startswith("/"):
            raise NotRemote(f"its command line names {value}, outside the project")
        shown.append(head + value)
    return tuple(shown)


def with_package(arguments: tuple[str, ...], package: str) -> list[str]:
    """``arguments`` with ``-I{iree_kernels}`` naming ``package``, this machine's copy."""
    return [f"-I{package}{a[2 + len(PACKAGE):]}" if a.startswith("-I" + PACKAGE) else a
            for a in arguments]


def _split_path(argument: str) -> tuple[str, str]:
    """An argument as an option and the path it may hold: ``--x=``/``@``/``-o`` and the rest."""
    if argument.startswith("@"):
        return "@", argument[1:]
    if argument.startswith("-") and "=" in argument:
        option, _, value = argument.partition("=")
        return option + "=", value
    if argument.startswith("-") and not argument.startswith("--") and \
            argument[2:3] in ("/", "{"):
        return argument[:2], argument[2:]       # -I/path, -o/path, -I{iree_kernels}/path
    return "", argument
