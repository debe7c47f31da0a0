"""No two models or kernels of a project write the same path, or a file where another writes a folder.

Not for where a step writes (the site tools); this only foresees collisions
while the manifests are read.
"""
from __future__ import annotations

from pathlib import PurePosixPath

from iree_kernels.kinds.registry import kernel_kind
from iree_kernels.project.records import Origin, Project


def check_outputs(project: Project) -> None:
    """No two models or kernels write the same path, or a file where another writes a folder."""
    build = project.build_dir
    files: dict[str, tuple[str, Origin]] = {}
    folders: dict[str, tuple[str, Origin]] = {}
    for model in project.models.values():
        owner = (f"model '{model.name}'", model.origin)
        for target in model.targets:
            files.setdefault(f"{build}/{target}/{model.name}.vmfb", owner)
            files.setdefault(f"{build}/{target}/{model.name}.check", owner)
            folders.setdefault(f"{build}/{target}/{model.name}", owner)
    for sub in project.substitutions:
        kind = kernel_kind(sub.file)
        if kind is not None and kind.compiles_to and not kind.per_substitution:
            made = PurePosixPath(build, sub.file).with_suffix(kind.compiles_to).as_posix()
            files.setdefault(made, (f"kernel {sub.file}", sub.origin))
    for path, owner in sorted(files.items()):
        for parent in PurePosixPath(path).parents:
            folders.setdefault(parent.as_posix(), owner)
    for path, (who, origin) in sorted(files.items()):
        if path in folders and folders[path][0] != who:
            other, where = folders[path]
            raise origin.error(f"{who} and {other} ({where.file}:{where.line}) would both write "
                               f"{path}: a file for {who}, a folder for {other}; rename one")
