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

Each tool's builder makes what it builds depend on the version of its program
(``iree_kernels.scons.kernels.version_emitter``): the lock record names the
versions found among a module's dependencies, those that really made it.

The lock records the checkout's git commit and its uncommitted changes
(``provenance.checkout_state``); 'release' refuses a checkout with changes unless
$ALLOW_DIRTY, and with $RELEASE_CHECK builds only after a passing, strict
'check' (``iree_kernels.scons.module.wanted`` counts 'release' as asking for 'check').

Timestamps come from $SOURCE_DATE_EPOCH (environment), else the last git
commit's time, else 0. The record and archive themselves are written by
``iree_kernels.release`` (``provenance``, ``lock``, ``archive``, ``compare``).
"""
from __future__ import annotations

import functools
import json
import os
from dataclasses import dataclass

import SCons.Action
import SCons.Builder
import SCons.Node.Python
import SCons.Script

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import write_atomically
from iree_kernels.release import compare
from iree_kernels.release.archive import Release, archive_bytes, read_release
from iree_kernels.release.lock import LOCK_MEMBER, ModuleBuild, lock_record, lock_text, module_lock
from iree_kernels.release.provenance import (checkout_state, dirty_refusal, parse_epoch,
                                             source_date_epoch)
from iree_kernels.scons.kernels import ToolVersion, versions_reached
from iree_kernels.scons.module import DeclaredModule
from iree_kernels.scons.reporting import fail, reporting_user_errors


@dataclass(frozen=True)
class SourceDateEpoch:
    """The release timestamp, found only when a release is built."""
    root: str

    def __str__(self) -> str:
        return str(source_date_epoch(self.root, os.environ))


@dataclass(frozen=True)
class CheckoutState:
    """The checkout's git commit and uncommitted changes, asked of git only when a release is built."""
    root: str

    def __str__(self) -> str:
        return json.dumps(_checkout_state(self.root), sort_keys=True)


@functools.lru_cache(maxsize=None)
def _checkout_state(root: str) -> dict:
    return checkout_state(root)


def _relative(node, root: str) -> str:
    return os.path.relpath(node.get_abspath(), root).replace(os.sep, "/")


def _versions(source) -> dict[str, str]:
    return {node.read().name: node.get_text_contents() for node in source
            if isinstance(node, SCons.Node.Python.Value) and isinstance(node.read(), ToolVersion)}


def _builds(spec: list[dict], versions: dict[str, str]) -> list[ModuleBuild]:
    return [ModuleBuild(**{**m, "tools": {t: versions[t] for t in m["tools"]}})
            for m in spec]


@reporting_user_errors
def write_lock(target, source, env):
    spec, epoch = json.loads(source[0].read()), int(source[1].get_text_contents())
    checkout = json.loads(source[2].get_text_contents())
    if not env["ALLOW_DIRTY"] and dirty_refusal(checkout):
        raise UserError(dirty_refusal(checkout))
    root = env.Dir("#").abspath
    entries = [module_lock(root, b) for b in _builds(spec, _versions(source))]
    write_atomically(target[0].abspath,
                     lock_text(lock_record(entries, epoch, checkout)))


@reporting_user_errors
def write_archive(target, source, env):
    root = env.Dir("#").abspath
    with open(source[0].abspath, "rb") as f:
        lock = f.read()
    members = {LOCK_MEMBER: lock}
    for module in source[1:]:
        with open(module.abspath, "rb") as f:
            members[_relative(module, root)] = f.read()
    epoch = json.loads(lock)["source_date_epoch"]
    write_atomically(target[0].abspath, archive_bytes(members, epoch))


@reporting_user_errors
def verify(target, source, env):
    spec = json.loads(source[0].read())
    archived = Release(spec["archive"], spec["lock"], spec["members"])
    root = env.Dir("#").abspath
    current = {b.key: module_lock(root, b)
               for b in _builds(spec["modules"], _versions(source))}
    findings = compare.compare(archived, current)
    text = compare.report(archived, findings)
    print(text, end="")
    if not all(f.matches for f in findings):
        raise UserError(f"{compare.summary(findings)} {archived.path}")
    write_atomically(target[0].abspath, text)


def releasing() -> bool:
    """Whether 'release' itself is on the command line (not verify-release), and not scons -c."""
    return "release" in map(str, SCons.Script.COMMAND_LINE_TARGETS) and \
        not SCons.Script.GetOption("clean")


def _refuse_a_dirty_checkout(root: str) -> None:
    """Stop before anything builds where the checkout has uncommitted changes."""
    try:
        refusal = dirty_refusal(_checkout_state(root))
    except UserError as e:
        fail(str(e))
    if refusal:
        fail(refusal)


def _check_source_date_epoch() -> None:
    """Refuse a malformed $SOURCE_DATE_EPOCH now, not halfway through a build."""
    text = os.environ.get("SOURCE_DATE_EPOCH", "")
    if text.strip():
        try:
            parse_epoch(text)
        except UserError as e:
            fail(str(e))


def _spec(root: str, declared: DeclaredModule, tools: dict) -> dict:
    return {"model": declared.model.name, "target": declared.where.folder,
            "module": _relative(declared.module, root),
            "record": _relative(declared.record, root),
            "options_flags": _relative(declared.options, root),
            "substitution_flags": _relative(declared.flag_file, root),
            "tools": sorted(tools)}


def _inputs(env, declared: DeclaredModule, tools: dict) -> list:
    top = env.Dir("#")              # Dir.File: the path is not substituted
    return [declared.module, declared.record, declared.options, declared.flag_file,
            *(top.File(path) for path in declared.checkout_files), *declared.made_kernels,
            *tools.values()]


def _unique(nodes: list) -> list:
    return list(dict.fromkeys(nodes))


def declare_release(env, modules: list[DeclaredModule]):
    """Declare 'release' (and 'verify-release' when asked for) from the modules a project declared."""
    root = env.Dir("#").abspath
    here = env.Dir(f"#{env['BUILD_DIR']}").Dir("release")
    name = env.subst("$IREE_RELEASE_NAME")
    _check_source_date_epoch()
    specs, inputs = [], []
    for declared in modules:
        tools = versions_reached(declared.module)
        specs.append(_spec(root, declared, tools))
        inputs.append(_inputs(env, declared, tools))
    epoch = env.Value(SourceDateEpoch(root), name="SOURCE_DATE_EPOCH")
    checkout = env.Value(CheckoutState(root), name="IREE_RELEASE_CHECKOUT")
    if releasing() and not env["ALLOW_DIRTY"]:
        _refuse_a_dirty_checkout(root)
    lock = env.IreeLockRecord(here.File(f"{name}.lock.json"),
                              [env.Value(json.dumps(specs)), epoch, checkout,
                               *_unique([n for i in inputs for n in i])])
    archive = env.IreeReleaseArchive(here.File(f"{name}.tar.gz"),
                                     [lock, *(d.module for d in modules)])
    if releasing() and env["RELEASE_CHECK"]:
        env.Requires(lock, env.Alias("check"))     # order only: the lock's inputs stay its own
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
        archived = read_release(path)
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
                   IREE_VERIFYRELEASECOMSTR="VERIFY   $ARCHIVE")
    env["BUILDERS"]["IreeLockRecord"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_lock, "$IREE_LOCKCOMSTR"), suffix=".json")
    env["BUILDERS"]["IreeReleaseArchive"] = SCons.Builder.Builder(
        action=SCons.Action.Action(write_archive, "$IREE_ARCHIVECOMSTR"), suffix=".tar.gz")
    env["BUILDERS"]["IreeVerifyRelease"] = SCons.Builder.Builder(
        action=SCons.Action.Action(verify, "$IREE_VERIFYRELEASECOMSTR"), suffix=".txt")
    env.AddMethod(declare_release, "IreeRelease")


def exists(env):
    return True
