"""``python -m iree_kernels COMMAND``: what runs without SCons.

    python -m iree_kernels init [DIR]     # a new repo: SConstruct, kernels/, models/, .gitignore
    python -m iree_kernels scheduler      # a Dask scheduler for the build's steps (docs/remote.md)
    python -m iree_kernels worker SCHEDULER   # a Dask worker for them

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
    worker = commands.add_parser("worker", help="run a Dask worker for builds' steps "
                                 "(DASK_SCHEDULER); docs/remote.md")
    worker.add_argument("scheduler", help="the scheduler's address, e.g. tcp://host:8786")
    worker.add_argument("--name", help="the worker's name in progress lines "
                        "(default: host-pid)")
    worker.add_argument("--nthreads", type=int, default=1,
                        help="steps run at once (default: 1; iree-compile uses threads itself)")
    worker.add_argument("--scratch", type=Path, default=Path("iree-kernels-worker"),
                        help="the only folder steps write in (default: ./iree-kernels-worker)")
    worker.add_argument("--tool", action="append", default=[], metavar="NAME=PATH",
                        help="a tool to run instead of the one found (e.g. iree-compile=PATH)")
    worker.add_argument("--resources", default="", metavar="NAME=N,...",
                        help="more Dask resources (devices are found: cuda=N)")
    scheduler = commands.add_parser("scheduler", help="run a Dask scheduler for builds' "
                                    "steps (it reads their records, so runs this library)")
    scheduler.add_argument("--host", default="127.0.0.1",
                           help="the address to listen on (default: 127.0.0.1)")
    scheduler.add_argument("--port", type=int, default=8786, help="default: 8786")
    args = parser.parse_args(argv)
    if args.command == "worker":
        return _worker(parser, args)
    if args.command == "scheduler":
        from iree_kernels.remote.worker import serve_scheduler
        serve_scheduler(args.host, args.port)
        return 0
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


def _worker(parser, args) -> int:
    from iree_kernels.remote.worker import serve
    try:
        tools = dict(_pair(text, str) for text in args.tool)
        resources = dict(_pair(text, float) for text in args.resources.split(",") if text)
    except ValueError as e:
        parser.error(str(e))
    serve(args.scheduler, name=args.name, nthreads=args.nthreads, scratch=args.scratch.resolve(),
          tools=tools, resources=resources)
    return 0


def _pair(text: str, kind) -> tuple:
    name, equals, value = text.partition("=")
    if not equals or not name:
        raise ValueError(f"expected NAME=VALUE: {text!r}")
    return name, kind(value)


if __name__ == "__main__":
    sys.exit(main())
