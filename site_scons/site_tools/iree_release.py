"""SCons tool: reproducible release archives, and verifying a checkout against one.

Method:
  env.IreeRelease(modules)   called by IreeKernelProject with what it declared
                             per module; declares the aliases
    release          $BUILD_DIR/release/$IREE_RELEASE_NAME.tar.gz (every module
                     and lock.json) and, beside it, $IREE_RELEASE_NAME.lock.json
    verify-release   with ARCHIVE=path: rebuilds the modules the archive's lock
                     record names and reports, file by file, what differs and why

Builders:
  IreeLockRecord       Value(JSON spec) + the files and tool versions it records -> .lock.json
  IreeReleaseArchive   .lock.json + modules -> .tar.gz
  IreeVerifyRelease    Value(JSON spec) + the files it checks -> verify-release.txt (the report)

Every module, and every file a command makes on the way to it, also depends on
the version its program prints (a Value per program, asked once per run):
a new iree-compile or nvcc rebuilds what it made, cache entries are keyed by
it, and the lock record names the versions that really made each module.

Timestamps come from $SOURCE_DATE_EPOCH (environment), else the last git
commit's time, else 0. The record and archive themselves are written by
``iree_kernels.release``.
"""
from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass

import SCons.Action
import SCons.Builder
import SCons.Node.Python
import SCons.Script
import SCons.Subst

from iree_kernels import release, toolchains
from iree_kernels.errors import UserError
from iree_kernels.scons import fail, named_value, reporting_user_errors, write_atomically


@dataclass(frozen=True)
class ToolVersion:
    """A program's version, asked only when a signature or the lock record needs it."""
    program: str

    @property
    def name(self) -> str:
        return os.path.basename(self.program)

    def __str__(self) -> str:
        try:
            return toolchains.version(self.program)
        except UserError as e:
            # A --version that hangs. SCons asks while deciding what to build, where an
            # exception is printed with a traceback and asks again; no version must
            # key anything: one line, and stop.
            sys.stdout.flush()
            sys.stderr.write(f"scons: *** {e}\n")
            sys.stderr.flush()
            os._exit(2)


@dataclass(frozen=True)
class SourceDateEpoch:
    """The release timestamp, found only when a release is built."""
    root: str

    def __str__(self) -> str:
        return str(release.source_date_epoch(self.root, os.environ))


def _relative(node, root: str) -> str:
    return os.path.relpath(node.get_abspath(), root).replace(os.sep, "/")


_PROGRAMS = {}


def _program(node) -> str | None:
    """The program of the command that builds ``node``; None for a Python action."""
    executor = node.get_executor()
    env = executor.get_build_env()
    actions = executor.get_action_list()
    key = (tuple(id(a) for a in actions), id(env))
    if key not in _PROGRAMS:
        _PROGRAMS[key] = _find_program(executor, env, actions)
    return _PROGRAMS[key]


def _find_program(executor, env, actions) -> str | None:
    for action in actions:
        if isinstance(action, SCons.Action.ListAction):      # a command, then a Python step
            found = _find_program(executor, env, action.list)
            if found:
                return found
        elif isinstance(action, SCons.Action.CommandAction):
            argv = env.subst_list(action.cmd_list, SCons.Subst.SUBST_CMD,
                                  target=executor.get_all_targets(),
                                  source=executor.get_all_sources())
            if argv and argv[0]:
                program = str(argv[0][0])
                # WhereIs expands its argument: a path is taken as it is.
                return program if os.path.isabs(program) else env.WhereIs(program) or program
    return None


def _depend_on_tool_versions(env, module, versions: dict) -> dict:
    """Make every command-built node on the way to ``module`` depend on its program's version.

    Returns the Value nodes of the programs used, by program name.
    """
    used, seen, pending = {}, set(), [module]
    while pending:
        node = pending.pop()
        if node in seen or not node.has_builder():
            continue
        seen.add(node)
        program = _program(node)
        if program:
            if program not in versions:
                versions[program] = named_value(ToolVersion(program), f"{program} --version")
            env.Depends(node, versions[program])
            used[os.path.basename(program)] = versions[program]
        pending.extend(node.sources)
    return used


def _versions(source) -> dict[str, str]:
    return {node.read().name: node.get_text_contents() for node in source
            if isinstance(node, SCons.Node.Python.Value) and isinstance(node.read(), ToolVersion)}


def _builds(spec: list[dict], versions: dict[str, str]) -> list[release.ModuleBuild]:
    return [release.ModuleBuild(**{**m, "tools": {t: versions[t] for t in m["tools"]}})
            for m in spec]


@reporting_user_errors
def write_lock(target, source, env):
    spec, epoch = json.loads(source[0].read()), int(source[1].get_text_contents())
    root = env.Dir("#").abspath
    entries = [release.module_lock(root, b) for b in _builds(spec, _versions(source))]
    write_atomically(target[0].abspath, release.lock_text(release.lock_record(entries, epoch)))


@reporting_user_errors
def write_archive(target, source, env):
    root = env.Dir("#").abspath
    with open(source[0].abspath, "rb") as f:
        lock = f.read()
    members = {release.LOCK_MEMBER: lock}
    for module in source[1:]:
        with open(module.abspath, "rb") as f:
            members[_relative(module, root)] = f.read()
    epoch = json.loads(lock)["source_date_epoch"]
    write_atomically(target[0].abspath, release.archive_bytes(members, epoch))


@reporting_user_errors
def verify(target, source, env):
    spec = json.loads(source[0].read())
    archived = release.Release(spec["archive"], spec["lock"], spec["members"])
    root = env.Dir("#").abspath
    current = {b.key: release.module_lock(root, b)
               for b in _builds(spec["modules"], _versions(source))}
    findings = release.compare(archived, current)
    text = release.report(archived, findings)
    print(text, end="")
    if not all(f.matches for f in findings):
        raise UserError(f"{release.summary(findings)} {archived.path}")
    write_atomically(target[0].abspath, text)


def _check_source_date_epoch() -> None:
    """Refuse a malformed $SOURCE_DATE_EPOCH now, not halfway through a build."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "")
    if text.strip():
        try:
            release.parse_epoch(text)
        except UserError as e:
            fail(str(e))


def _spec(root: str, declared: dict, tools: dict) -> dict:
    options, substitutions = declared["flag_files"]
    return {"model": declared["model"], "target": declared["target"],
            "module": _relative(declared["module"], root),
            "record": _relative(declared["record"], root),
            "options_flags": _relative(options, root),
            "substitution_flags": _relative(substitutions, root),
            "tools": sorted(tools)}


def _inputs(declared: dict, tools: dict) -> list:
    return [declared["module"], declared["record"], *declared["flag_files"],
            *declared["inputs"], *tools.values()]


def _unique(nodes: list) -> list:
    return list(dict.fromkeys(nodes))


def declare_release(env, modules: list[dict]):
    """Declare 'release' (and 'verify-release' when asked for) from the modules a project declared.

    Each entry of ``modules`` names model, target, module (node), record
    (substitutions.json), flag_files ([options, substitutions]) and inputs
    (the model, kernels and built kernels it substitutes).
    """
    root = env.Dir("#").abspath
    here = env.Dir(f"#{env['BUILD_DIR']}").Dir("release")
    name = env.subst("$IREE_RELEASE_NAME")
    _check_source_date_epoch()
    versions, specs, inputs = {}, [], []
    for declared in modules:
        tools = _depend_on_tool_versions(env, declared["module"], versions)
        specs.append(_spec(root, declared, tools))
        inputs.append(_inputs(declared, tools))
    epoch = env.Value(SourceDateEpoch(root), name="SOURCE_DATE_EPOCH")
    lock = env.IreeLockRecord(here.File(f"{name}.lock.json"),
                              [env.Value(json.dumps(specs)), epoch,
                               *_unique([n for i in inputs for n in i])])
    archive = env.IreeReleaseArchive(here.File(f"{name}.tar.gz"),
                                     [lock, *(d["module"] for d in modules)])
    env.Alias("release", [archive, lock])
    if "verify-release" in SCons.Script.COMMAND_LINE_TARGETS:
        _declare_verification(env, here, specs, inputs)
    return archive


def _declare_verification(env, here, specs: list[dict], inputs: list[list]):
    if not env.get("ARCHIVE"):
        fail("verify-release needs the archive to check: scons verify-release "
              "ARCHIVE=path/to/release.tar.gz")
    path = os.path.join(SCons.Script.GetLaunchDir(), os.path.expanduser(env["ARCHIVE"]))
    try:
        archived = release.read_release(path)
    except UserError as e:
        fail(str(e))
    wanted = {f"{m['target']}/{m['model']}" for m in archived.lock["modules"]}
    chosen = [i for i, s in enumerate(specs) if f"{s['target']}/{s['model']}" in wanted]
    spec = {"archive": env["ARCHIVE"], "lock": archived.lock, "members": archived.members,
            "modules": [specs[i] for i in chosen]}
    report = env.IreeVerifyRelease(here.File("verify-release.txt"),
                                   [env.Value(json.dumps(spec)),
                                    *_unique([n for i in chosen for n in inputs[i]])])
    env.AlwaysBuild(report)
    env.NoCache(report)
    env.Alias("verify-release", report)


def generate(env):
    env.SetDefault(IREE_RELEASE_NAME="iree-kernels-release",
                   IREE_LOCKCOMSTR="LOCK     $TARGET",
                   IREE_ARCHIVECOMSTR="ARCHIVE  $TARGET",
                   IREE_VERIFYCOMSTR="VERIFY   $ARCHIVE")
    env["BUILDERS"]["IreeLockRecord"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_lock, "$IREE_LOCKCOMSTR"), suffix=".json")
    env["BUILDERS"]["IreeReleaseArchive"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_archive, "$IREE_ARCHIVECOMSTR"), suffix=".tar.gz")
    env["BUILDERS"]["IreeVerifyRelease"] = SCons.Builder.Builder(
        action=SCons.Action.Action(verify, "$IREE_VERIFYCOMSTR"), suffix=".txt")
    env.AddMethod(declare_release, "IreeRelease")


def exists(env):
    return True
