"""Errors and checks common to a manifest's fields: the line a field is on, unknown fields, paths.

Not for what a field means: ``manifest`` (models), ``substitutions``.
"""
from __future__ import annotations

from iree_kernels.core.errors import UserError, closest
from iree_kernels.core.toml_lines import line_of_field
from iree_kernels.project.records import Origin
from iree_kernels.project.repo_paths import repo_path


def field_error(origin: Origin, text: str, key: str, message: str) -> UserError:
    return UserError(message, file=origin.file, line=line_of_field(text, origin.line, key),
                     entry=origin.entry, field=key)




def check_keys(entry: dict, allowed: set[str], origin: Origin, text: str) -> None:
    for key in entry:
        if key not in allowed:
            raise UserError(f"unknown field '{key}'{closest(key, allowed)}; allowed fields: "
                            f"{', '.join(sorted(allowed))}", file=origin.file,
                            line=line_of_field(text, origin.line, key), entry=origin.entry)


def path_field(project: Project, entry: dict, key: str, origin: Origin, text: str,
               required: bool = False, suffixes: tuple[str, ...] = (),
               dump_name: bool = False) -> str | None:
    value = entry.get(key)
    if value is None:
        if required:
            raise origin.error("missing required field", key)
        return None
    if not isinstance(value, str) or not value:
        raise field_error(origin, text, key, "must be a path (a string)")
    try:
        return repo_path(project.root, value, project.build_dir, suffixes, dump_name)
    except ValueError as e:
        raise field_error(origin, text, key, str(e)) from None


