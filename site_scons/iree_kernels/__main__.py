"""``python -m iree_kernels COMMAND``: what runs without SCons.

    python -m iree_kernels init [DIR]     # a new repo: SConstruct, kernels/, models/, .gitignore

(The rest is ``scons``'s: ``scons -h`` in a repo lists it.)
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from iree_kernels.core.errors import UserError
from iree_kernels.project.init_project import init


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m iree_kernels",
                                     description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    start = commands.add_parser("init", help="start a repo that uses these tools")
    start.add_argument("dir", nargs="?", type=Path, default=Path("."),
                       help="the repo's folder, made if missing (default: the current one)")
    args = parser.parse_args(argv)
    try:
        written = init(args.dir)
    except UserError as error:
        print(f"iree_kernels init: {error}", file=sys.stderr)
        return 1
    for path in written:
        print(f"wrote {path}")
    print(f"next: put a model in {args.dir / 'models'}, declare it in "
          f"{args.dir / 'kernels/kernels.toml'}, then run scons dump in {args.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
