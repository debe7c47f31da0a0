"""SCons tool: the program a module is compiled from, made from one run of IREE's front end.

Method:
  env.IreeModuleFromProgram(module, program, *, target, options, substitutions, subs,
                            replacements, resolved, objects, unlinked)
      declares ``module`` compiled from ``program`` (the model at IREE's
      executable-sources phase, ``IreeExecutableSources``) and returns it; a
      module with no substitutions and no codegen cache is compiled from the
      model itself, as a plain iree-compile.

Per module, beside ``program``:
  module/<model>.mlir  the program with the manifest's source and wrapped
                       substitutions put in place of their executables, as
                       ``--iree-hal-substitute-executable-source`` would, and,
                       where EXECUTABLE_CACHE turns the per-executable codegen
                       cache on for the target, each other executable replaced
                       by its stand-in from the cache, which embeds its binary;
                       misses are compiled into the cache first (CODEGEN lines).
                       Named like the model: iree-compile names what it links
                       after its input file.
  module/<model>.flags ``--compile-from=executable-targets`` where every
                       executable of the assembled program is already translated
                       (cached) or external (wrapped, on GPUs) and nothing is
                       object-substituted; ``--compile-from=executable-sources``
                       otherwise. The same module either way; the first skips
                       the passes that would translate nothing (0.6 s -> 0.2 s
                       for densenet121 on Vulkan).
  the module           ``$IREE_COMPILECOM`` from module/<model>.mlir with the
                       options, the substitution flags and module/<model>.flags:
                       object substitutions apply there.

IREE's front end (everything up to the executable-sources phase, often more
than half of a compile) so runs once per model content, target and options:
editing a kernel of any kind, or the manifest, never runs it again.

Why the cache entries are files and not SCons nodes: which executables a model
has is known only once its program is dumped, during the build; and compiling
one executable per iree-compile run costs about three times its share of a
batch (every run sets up its backend again; on CUDA it links libdevice again),
which made cold builds slower than a plain compile. So one ASSEMBLE action per
module compiles all its misses, split into up to ``-j`` batches that share ``-j``
slots with every other module's. Entries are content-addressed and written
whole, so checkouts may share ``CODEGEN_CACHE_DIR``. Where CACHE_DIR is set
(SCons's CacheDir, which shares the modules), the entries live in its
``codegen/`` unless CODEGEN_CACHE_DIR says otherwise; with CACHE_READONLY they
are only read from there, and misses go to the build's own folder.

Variables: EXECUTABLE_CACHE (targets using the cache), CODEGEN_CACHE_DIR.
"""
from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import SCons.Action
import SCons.Builder
import SCons.Script
import SCons.Util

from iree_kernels.module import codegen_cache, relink, selection
from iree_kernels.ir import executables, translation
from iree_kernels.project import option_files
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import Program
from iree_kernels.ir.program_text import NotSplittable, open_program
from iree_kernels.core.files import link_atomically, write_atomically
from iree_kernels.scons import caches, relinking, remote
from iree_kernels.scons.nodes import read_spec, spec_value
from iree_kernels.scons.reporting import fail, reporting_user_errors
from iree_kernels.scons.spawn import timeouts

OWN_FOLDER = "$BUILD_DIR/codegen-cache"
SHORT_COMSTRS = {"IREE_ASSEMBLECOMSTR": "ASSEMBLE  $TARGET",
                 "IREE_CODEGENCOMSTR": "CODEGEN  $TARGET"}


class _CodegenRun:
    """What every module's ASSEMBLE of one build shares: carried by the environment
    (``$IREE_CODEGEN_RUN``), not by this module."""

    def __init__(self) -> None:
        self._slots: threading.BoundedSemaphore | None = None
        self._lock = threading.Lock()
        self._warned: set[str] = set()

    def slots(self) -> threading.BoundedSemaphore:
        """One slot per -j job, shared by every module compiling misses at the same time."""
        with self._lock:
            if self._slots is None:
                self._slots = threading.BoundedSemaphore(_jobs())
            return self._slots

    def first_time(self, damage: str) -> bool:
        """Whether ``damage`` is met for the first time: a read-only entry is met again by every
        module having it, and warned of once."""
        with self._lock:
            new = damage not in self._warned
            self._warned.add(damage)
            return new


def declare_module_from_program(env, module, program, *, target: str, options, substitutions,
                                subs, replacements: dict, resolved=(), objects=None,
                                unlinked=None) -> list:
    """``replacements``: substitution key -> the node of the MLIR file that replaces its executable.
    ``objects``: substitution key -> the object an object-mode substitution puts in (RELINK).
    ``unlinked``: what of RELINK's unlinked module compiled from the model the project declared
    (``relinking.declare_unlinked_from_model``), if it did.

    ``resolved``: the resolution step's output (``IreeResolve``), which says
    which executable each key landed on; needed where there are substitutions.
    """
    try:
        cached = target in codegen_cache.cached_targets(env["EXECUTABLE_CACHE"])
    except UserError as e:
        fail(str(e))
    short = {} if env["VERBOSE"] else SHORT_COMSTRS
    model = Path(str(module)).stem
    spec = {"target": target, "cache": cached,
            "replacements": {name: node.get_path() for name, node in replacements.items()},
            "objects": sorted({s.key for s in subs if s.mode == "object"})}
    where = {}
    if cached:
        own, shared = cache_folders(env)
        cache = env.Dir(own).Dir(target)
        # Where the cache is changes nothing built: the folders are not part of the spec.
        where = {"IREE_CODEGEN_FOLDER": cache.get_path(),
                 "IREE_CODEGEN_SHARED": shared and env.Dir(shared).Dir(target).get_path()}
        spec.update(compiler=toolchains.version(env.subst("$IREE_COMPILE"), timeouts=timeouts(env)),
                    flags=[str(a) for line in env.subst_list("$IREE_CACHED_COMPILEFLAGS")
                           for a in line])
    if not subs and not cached:
        # Nothing to put in and nothing cached: a plain compile of the model, in one run. The
        # scanner does not read the model, which weighs what its weights do, as it does not
        # read an assembled program.
        model_node = program[0].sources[0]
        model_node.attributes.assembled = True
        return env.IreeModule(module, [model_node, options, substitutions])
    relinked = relinking.declare_relinked_module(
        env, module, program, target=target, options=options, assembled_spec=spec, subs=subs,
        replacements=replacements, objects=objects or {}, resolved=resolved,
        substitutions=substitutions, unlinked=unlinked, **where, **short)
    if relinked is not None:
        return relinked
    assembled = env.IreeAssembledProgram(
        program[0].dir.Dir("module").File(f"{model}.mlir"),
        [program, options, spec_value(env, spec), *resolved,
         *(replacements[name] for name in sorted(replacements))], **where, **short)
    env.Depends(assembled, substitutions)      # substitutions are checked before they are applied
    assembled[0].attributes.assembled = True   # the module's scanner reads its flags instead
    if cached and cache.is_under(env.Dir(f"#{env['BUILD_DIR']}")):
        env.Clean(assembled, cache)
    # assembled[1]: --compile-from= the phase the program is at (ASSEMBLE says which).
    return env.IreeModule(module, [assembled[0], options, substitutions, assembled[1]])


def cache_folders(env) -> tuple[str, str | None]:
    """The folder misses are compiled into, and a folder only read; see CODEGEN_CACHE_DIR's help."""
    given = env.subst("$CODEGEN_CACHE_DIR")
    shared, read_only = caches.shared_cache(env)
    own = env.subst(OWN_FOLDER)
    if given or shared is None:
        return given or own, None
    shared = os.path.join(shared, "codegen")
    return (own, shared) if read_only else (shared, None)


@reporting_user_errors
def assemble_program(target, source, env):
    program, options, spec = source[0], source[1], read_spec(source[2])
    if not (spec["replacements"] or spec["objects"] or spec["cache"]):
        # Nothing to put in: the program as the front end wrote it, not read (it weighs what the
        # weights do); its compile starts where the front end stopped.
        link_atomically(program.abspath, target[0].abspath)
        write_atomically(target[1].abspath, "--compile-from=executable-sources\n")
        return
    placeholders = set()            # RELINK's unlinked programs: wrapped kernels linking nothing
    if spec["replacements"] or spec["objects"]:
        # Keys -> the executables they landed on (IreeResolve's resolved.json).
        landed = selection.loads(source[3].get_text_contents())
        placeholders = {landed[key].executable for key in spec.get("placeholders", ())}
        spec = {**spec, "objects": sorted(landed[key].executable for key in spec["objects"]),
                "replacements": {landed[key].executable: path
                                 for key, path in spec["replacements"].items()}}
    text = program.get_text_contents()
    replacements = {}
    for name, path in sorted(spec["replacements"].items()):
        mlir = Path(path).read_text(encoding="utf-8")
        replacements[name] = (relink.placeholder(mlir, path) if name in placeholders else mlir, path)
    try:
        with open_program(text, str(program), tuple(r for r, _ in replacements.values())) as p:
            assembled, phase = _assemble(p, replacements, target, options, spec, env)
    except NotSplittable:               # a stand-in or the program itself needs the bindings
        with Program(text, str(program)) as p:
            assembled, phase = _assemble(p, replacements, target, options, spec, env)
    if assembled is None:               # nothing replaced: the program as the front end wrote it
        link_atomically(program.abspath, target[0].abspath)
    else:
        write_atomically(target[0].abspath, assembled + "\n")
    write_atomically(target[1].abspath, f"--compile-from={phase}\n")


def _assemble(assembled, replacements: dict, target, options, spec: dict,
              env) -> tuple[str | None, str]:
    """The assembled program's text (None: the program unchanged), and the phase its compile
    starts at."""
    for name, (mlir, path) in replacements.items():
        assembled.replace(name, mlir, path)
    translated = set()
    if spec["cache"]:
        translated = _stand_in_cached_executables(target[0], assembled, options, spec, env)
    # Where no executable is left to translate, the compile skips the phases that would.
    phase = "executable-targets" if not spec["objects"] and all(
        name in translated or assembled.is_external(name) for name in assembled.names()
    ) else "executable-sources"
    return (assembled.text() if replacements or translated else None), phase


def _phase_emitter(target, source, env):
    return [target[0], target[0].target_from_source("", ".flags")], source


def _stand_in_cached_executables(target, assembled, options, spec: dict,
                                 env) -> set[str]:
    """Compile the misses, put every cached executable's stand-in in place; their names."""
    jobs = _jobs()
    # Where the build has a cluster, the batches' compiles go to its workers.
    sent = remote.cluster(env) is not None
    compiler = codegen_cache.Compiler(env.subst("$IREE_COMPILE"), (options.get_path(),),
                                      tuple(spec["flags"]), print if env["VERBOSE"] else None,
                                      timeouts(env),
                                      remote.compile_runner(env, [target], timeouts(env)) if sent else None,
                                      target.dir.abspath if sent else None)
    shared = env["IREE_CODEGEN_SHARED"]
    plan = codegen_cache.plan(assembled.executables(), spec["target"],
                              Path(env["IREE_CODEGEN_FOLDER"]), spec["compiler"],
                              options.get_text_contents().splitlines() + spec["flags"]
                              + option_files.codegen_key(options.get_text_contents().splitlines(),
                                                         env.Dir("#").abspath),
                              spec["objects"], shared and Path(shared),
                              caches.remote(env))
    run = env["IREE_CODEGEN_RUN"]
    for damage in plan.damaged:
        if run.first_time(damage):
            sys.stderr.write(f"scons: warning: codegen cache entry {damage}\n")
    names = {entry.key: name for name, entry in plan.entries.items()}
    for entry, _ in plan.misses:
        shown = entry.binary if entry.binary_suffix else entry.translated
        _say(env.subst("$IREE_CODEGENCOMSTR", raw=1, target=[env.File(str(shown))])
             + f" ({names[entry.key]})")
    try:
        codegen_cache.compile_entries(compiler, plan.misses, jobs, run.slots(),
                                      cores=len(os.sched_getaffinity(0)))
    except codegen_cache.CodegenFailed as failed:
        raise _codegen_failure(failed, plan, assembled, spec["target"], target) from None
    codegen_cache.assemble(assembled, plan)
    _say(f"codegen cache: {target}: {plan.hits} cached, {len(plan.misses)} compiled, "
         f"{len(plan.executables) - len(plan.entries)} left to the module's compile")
    return set(plan.entries)


def _codegen_failure(failed, plan, assembled, target_name: str, target) -> UserError:
    """One line naming the model, the target and every executable IREE could not compile."""
    log = target.dir.dir.File("codegen-errors.log")
    write_atomically(log.abspath, failed.log)
    names = {}
    for name, entry in plan.entries.items():
        names.setdefault(entry.key, []).append(name)
    texts = {e.name: e.text for e in assembled.executables()}
    described = []
    for entry, message in failed.failures:
        for name in names[entry.key]:
            export = executables.read_executables(texts[name], str(target))[name].export
            described.append(translation.failed_executable(name, export, message))
    return UserError(translation.codegen_failure(target_name, Path(target.name).stem, described,
                                                 log.get_path()))


def _say(line: str) -> None:
    """One line in one write: -j runs actions in threads, and print() writes the newline apart."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _jobs() -> int:
    return max(1, int(SCons.Script.GetOption("num_jobs") or 1))


def generate(env):
    if "IreeModule" not in env["BUILDERS"]:
        env.Tool("iree_compile")
    if "IreeRelinkModule" not in env["BUILDERS"]:
        env.Tool("iree_relink")             # its steps, where RELINK applies (scons.relinking)
    env.SetDefault(
        # Flags of every iree-compile run compiling misses; part of every entry's key.
        IREE_CACHED_COMPILEFLAGS=SCons.Util.CLVar(""),
        IREE_ASSEMBLECOMSTR="Assembling the program $TARGET is compiled from",
        IREE_CODEGENCOMSTR="Compiling into the codegen cache: $TARGET",
        IREE_CODEGEN_RUN=_CodegenRun(),
    )
    env["BUILDERS"]["IreeAssembledProgram"] = SCons.Builder.Builder(
        action=SCons.Action.Action(assemble_program, "$IREE_ASSEMBLECOMSTR"), suffix=".mlir",
        emitter=_phase_emitter)
    env.AddMethod(declare_module_from_program, "IreeModuleFromProgram")


def exists(env):
    return True
