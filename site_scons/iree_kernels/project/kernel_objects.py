"""The objects an MLIR kernel links (``#hal.executable.object<{path = ...}>``), checked:
each a file of the repository, found as iree-compile finds it.

Not for reading the paths out of MLIR (``iree_kernels.ir.object_references``).
"""
from __future__ import annotations

import os
from pathlib import PurePosixPath

from iree_kernels.core.files import read_text
from iree_kernels.ir.object_references import OBJECT_PATH_RE, object_paths
from iree_kernels.project.fields import field_error
from iree_kernels.project.records import Origin, Project, Substitution
from iree_kernels.project.repo_paths import PATH_RE, inside, repo_path


def check_object_paths(project: Project, file: str, origin: Origin,
                       text: str) -> tuple[tuple[str, ...], str]:
    """Every ``#hal.executable.object<{path = ...}>`` in an MLIR kernel names a file in the repo.

    A path is looked up as iree-compile looks it up: relative to the
    repository root (the build's working folder), then to the kernel's own
    folder (``--iree-hal-executable-object-search-path``). Returns the files
    the kernel links (repo-relative) and the kernel's folder where one was
    found there, else ''.
    """
    try:
        kernel = read_text(project.root / file)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise field_error(origin, text, "file", f"cannot read {file}: "
                          f"{getattr(e, 'strerror', None) or e}") from None
    folder = PurePosixPath(file).parent.as_posix()
    linked = set(object_paths(kernel))
    found, searched = [], ""
    for m in OBJECT_PATH_RE.finditer(kernel):
        value = m.group(1)
        beside = f"{folder}/{value}"
        # iree-compile takes the path from its working folder where it is there, else it
        # searches; one leading out of the repository or into the build folder is refused.
        from_root = folder == "." or value.startswith("/") or not PATH_RE.fullmatch(value) \
            or os.path.lexists(project.root / value) or not inside(project.root, value, project.build_dir)
        try:
            path = repo_path(project.root, value if from_root else beside, project.build_dir)
        except ValueError as e:
            line = kernel.count("\n", 0, m.start()) + 1
            problem = str(e) if from_root else (
                str(e).replace(beside, value) + f" (looked for in the repository root and in "
                f"{folder}/)" if "file not found" in str(e) else f"'{value}' (in {folder}/): {e}")
            raise field_error(origin, text, "file", f"{file}:{line}: the "
                              f"#hal.executable.object path: {problem}") from None
        searched = searched or ("" if from_root else folder)
        if value in linked:
            found.append(path)
    return tuple(dict.fromkeys(found)), searched




def check_object_search_paths(project: Project) -> None:
    """Kernels of one module linking objects by the same relative name from different folders:
    iree-compile would find one file for both (its search paths are per compile)."""
    by_module: dict[tuple, list[Substitution]] = {}
    for sub in project.substitutions:
        if sub.object_search_path:
            by_module.setdefault((sub.model, sub.target), []).append(sub)
    for subs in by_module.values():
        folders = sorted({s.object_search_path for s in subs})
        for sub in subs:
            for path in sub.objects:
                if not path.startswith(sub.object_search_path + "/"):
                    continue
                name = path[len(sub.object_search_path) + 1:]
                for other in folders:
                    if other != sub.object_search_path and \
                            (project.root / other / name).exists():
                        raise sub.origin.error(
                            f"{sub.file} links '{name}' from its folder, and {other}/{name} "
                            f"exists too: iree-compile searches every kernel folder of "
                            f"{sub.model}/{sub.target} and could take either; write the path "
                            f"from the repository root ('{path}')", "file")

