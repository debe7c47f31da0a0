"""Jinja2 rendering of the files the build writes: substitution records, wrapper executables,
kernel skeletons, expected outputs. Flag files have their own codec (``flag_files``).

Templates live in ``templates/``; this module only loads them and supplies
the filters they need. What goes into them is decided by the callers.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

TEMPLATES = Path(__file__).parents[1] / "templates"


@lru_cache(maxsize=None)
def environment():
    """The templates' jinja2.Environment (jinja2 imported here: a no-op build renders nothing)."""
    import jinja2
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
    )
    env.filters["json"] = lambda value: json.dumps(value, indent=2, sort_keys=True,
                                                   ensure_ascii=False)
    return env


def render(template: str, **context) -> str:
    return environment().get_template(template).render(**context)
