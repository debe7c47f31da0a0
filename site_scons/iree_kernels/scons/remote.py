"""The build's steps on a Dask cluster (DASK_SCHEDULER): which go, and as what.

``attach`` gives the environment its ``Cluster`` where DASK_SCHEDULER is set (not for -h,
-c); ``step_for`` makes the ``Step`` of a command
whose targets SCons has scanned: its inputs are every file those targets depend on (a
dependency the graph misses fails on the worker as it would in a clean checkout) inside the
project (models and kernels are; a file outside it is a tool's own, which the worker has
where the tool's identity is the same), its outputs the files the command writes. A step
whose tool is not one of REMOTE_TOOLS, or whose command line names a path outside the
project, stays here.
Not for: sending or running steps (``iree_kernels.remote``).
"""
from __future__ import annotations

import os

import SCons.Node.FS
import SCons.Script

from iree_kernels.core import processes, toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.remote.cluster import Cluster
from iree_kernels.remote.steps import LIBRARY, NotRemote, Step, relative_arguments, relative_to
from iree_kernels.remote.toolchain import REMOTE_TOOLS, identity
from iree_kernels.scons.build_folder import file_memo


def attach(env) -> None:
    address = env.get("DASK_SCHEDULER", "")
    # -n and --question run nothing, but declare what a build would (a check on a worker's
    # device); -h and -c declare nothing that runs.
    idle = any(SCons.Script.GetOption(o) for o in ("help", "clean"))
    env["IREE_DASK_CLUSTER"] = None if not address or idle else \
        Cluster(address, required=bool(env["DASK_REQUIRED"]), say=_say,
                connect_timeout=toolchains.seconds(env["DASK_CONNECT_TIMEOUT"]) or None)


def cluster(env) -> Cluster | None:
    return env.get("IREE_DASK_CLUSTER")


def step_for(env, argv: list[str], *, targets, outputs: list[str], output_folders=(),
             limit: float | None, also_read=(), devices=(), graph: bool = True) -> Step:
    """The Step running ``argv`` for ``targets`` (SCons nodes, scanned), writing ``outputs``
    (paths relative to the root) and the files in ``output_folders``; ``also_read``: files
    the step's own action wrote before it; ``graph`` False: those are all it reads (a run of
    a module a step made), not every dependency of ``targets``. NotRemote where it stays
    here."""
    program = toolchains.real_program(argv[0])
    tool = os.path.basename(program)
    if tool not in REMOTE_TOOLS:
        raise NotRemote(f"{tool} runs here", said=False)
    root = env.Dir("#").abspath
    memo = file_memo(env)
    cluster_ = cluster(env)
    inputs = {}
    for node in [*(_read_by(targets) if graph else ()), *also_read]:
        path = node.get_abspath() if hasattr(node, "get_abspath") else os.path.join(root, node)
        relative = relative_to(root, path)
        if relative is None:
            continue        # a tool's own file: models and kernels lie inside the project
        inputs[relative] = cluster_.input_digest(relative, root)
    own = memo.value("tool identity", os.path.realpath(program), lambda p: identity(str(p)),
                     lambda v: isinstance(v, str) and len(v) == 64)
    label = str(targets[0]) if targets else ""
    try:
        return Step(tool, own, relative_arguments(list(argv[1:]), root, LIBRARY),
                    tuple(sorted(inputs.items())), tuple(outputs), tuple(output_folders), limit,
                    label, tuple(devices))
    except ValueError as e:
        raise NotRemote(str(e)) from None


def _read_by(targets) -> list:
    """The files ``targets`` depend on (sources, scanned and declared dependencies) that exist."""
    seen, files = set(), []
    for target in targets:
        for child in target.children():
            if isinstance(child, SCons.Node.FS.File) and child not in seen \
                    and os.path.isfile(child.get_abspath()):
                seen.add(child)
                files.append(child)
    return files


def said_where(outcome, label: str) -> str:
    """The line after a step that ran on a worker."""
    return (f"         {label} ran on {outcome.worker} in {outcome.seconds:.2f} s "
            f"({outcome.waited:.2f} s here, {_mb(outcome.sent)} sent, "
            f"{_mb(outcome.received)} back)")


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB" if size >= 1e5 else f"{size / 1e3:.0f} kB"


def _say(line: str) -> None:
    print(line, flush=True)


def run_tool(env, argv: list[str], *, timeouts, targets=None, outputs=(), output_folders=(),
             also_read=(), devices=(), graph: bool = True, doing: str = "",
             file: str | None = None) -> str:
    """``toolchains.run(argv)`` for a step's action: on a worker where the build has a cluster
    and the step can go (``step_for``: ``targets``' dependencies and ``also_read`` are its
    inputs; ``outputs`` and ``output_folders``, absolute or relative to the root, what it
    writes), here otherwise."""
    found = cluster(env)
    if found is not None and targets:
        root = env.Dir("#").abspath
        program = toolchains.real_program(argv[0])
        try:
            step = step_for(env, argv, targets=targets,
                            outputs=[_relative(root, p) for p in outputs],
                            output_folders=[_relative(root, p) for p in output_folders],
                            limit=timeouts.for_program(program),
                            also_read=[_relative(root, p) for p in also_read],
                            devices=devices, graph=graph)
        except NotRemote as e:
            step = found.stays_here(e)
        outcome = found.run(step, root) if step else None
        if outcome is not None:
            _say(said_where(outcome, str(targets[0])))
            if outcome.timed_out:
                raise UserError(toolchains.timeout_message(os.path.basename(program),
                                                           step.limit) + f" ({doing})", file=file)
            return toolchains.checked([program, *argv[1:]],
                                      processes.Finished(outcome.returncode, outcome.output, ""),
                                      file=file, doing=doing)
    return toolchains.run(argv, file=file, doing=doing, timeouts=timeouts)


def device_runner(env, targets, driver: str):
    """A runner of the IREE runtime for a check's ``targets`` (``verification.run``): its runs
    go to a worker with a ``driver`` device where the build has a cluster."""
    def run(argv: list[str], *, reads, writes, file=None, doing="", timeouts=None) -> str:
        return run_tool(env, argv, timeouts=timeouts or toolchains.default_timeouts(),
                        targets=targets, outputs=writes, also_read=reads, devices=(driver,),
                        graph=False, doing=doing, file=file)
    return run


def process_runner(env, targets, driver: str):
    """A runner of the IREE runtime for a check's ``targets`` as ``processes.run`` runs it
    (``expected_outputs.run_case``): on a worker with a ``driver`` device where the build has a
    cluster and the run can go, here otherwise."""
    def run(argv: list[str], *, reads, writes, limit, cwd=None) -> processes.Finished:
        found = cluster(env)
        root = env.Dir("#").abspath
        if found is not None and cwd in (None, root):
            try:
                step = step_for(env, argv, targets=targets,
                                outputs=[_relative(root, p) for p in writes], limit=limit,
                                also_read=[_relative(root, p) for p in reads], devices=(driver,),
                                graph=False)
            except NotRemote as e:
                step = found.stays_here(e)
            outcome = found.run(step, root) if step else None
            if outcome is not None:
                _say(said_where(outcome, str(targets[0])))
                if outcome.timed_out:
                    raise processes.TimeLimit(limit, outcome.output)
                return processes.Finished(outcome.returncode, outcome.output, "")
        return processes.run(argv, limit=limit, cwd=cwd)
    return run


def compile_runner(env, targets, timeouts):
    """A runner of iree-compile for a step of ``targets`` that compiles files it wrote itself
    (the codegen cache's batches, verify's harnesses): on a worker where the step can go, here
    otherwise; what the step depends on is read too (the kernels a flag names)."""
    def run(argv: list[str], *, reads, writes, output_folders=(), doing="", file=None,
            timeouts=timeouts) -> str:
        return run_tool(env, argv, timeouts=timeouts, targets=targets, outputs=writes,
                        output_folders=output_folders, also_read=reads, doing=doing, file=file)
    return run


def device_elsewhere(env, driver: str) -> bool:
    """Whether the build's cluster has a worker with a ``driver`` device."""
    found = cluster(env)
    return found is not None and found.has_device(driver)


def _relative(root: str, path) -> str:
    relative = relative_to(root, os.fspath(path))
    if relative is None:
        raise NotRemote(f"it writes {path}, outside the project")
    return relative
