"""SCons tool: declare every module of a repo's kernel manifests.

``env.IreeKernelProject()`` reads ``kernels/**/*.toml`` and declares, per
model, target and architecture, one module: its options flag file, IREE's
front end (``executables.mlir``), where it has substitutions the resolution
of their selectors, their kernels (``env.Kernel``) and substitution flag file,
and the module itself. Each is one ``DeclaredModule`` record
(``iree_kernels.scons.module``), which the other tools build on: the check and
differential checks, microbenchmarks, hotspots, the dump listing, scaffold,
``compile_commands.json`` and the release. It returns the records.
Aliases: ``modules`` (the default), ``check``, and those the tools add.
``scons -h`` lists every target and the command-line variables
(``iree_kernels.scons.variables``); ``scons -c`` removes the build folder whole.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

import SCons.Script

from iree_kernels.project import option_files
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.kinds import gemm_interface
from iree_kernels.project import families
from iree_kernels.project.manifest import load_project
from iree_kernels.ir.targets import REPRODUCIBLE_FLAGS, TARGETS, module_targets
from iree_kernels.kinds.registry import KERNEL_KINDS, kernel_kind
from iree_kernels.scons.dry_run import list_every_step
from iree_kernels.scons.kernels import kernel_compiler, tool_version
from iree_kernels.scons.module import (EXECUTABLE_LISTING, EXECUTABLE_OPS, DeclaredKernel,
                                       DeclaredModule, failing, file_name, imply, wanted)
from iree_kernels.scons import build_folder, discovery, project_settings, relinking, remote
from iree_kernels.scons.nodes import spec_value
from iree_kernels.scons.reporting import fail
from iree_kernels.scons.signatures import trust_settled_signatures
from iree_kernels.scons.spawn import PSpawn, Spawn, timeouts
from iree_kernels.scons.variables import read_variables

SHORT_COMSTRS = {
    "IREE_COMPILECOMSTR": "IREE     $TARGET",
    "IREE_DUMPCOMSTR": "FRONTEND  $TARGET",
    "IREE_EXECUTABLEOPSCOMSTR": "OPS      $TARGET",
    "IREE_OPTIONSCOMSTR": "FLAGS    $TARGET",
    "IREE_SUBSTITUTECOMSTR": "SUBST    $TARGET",
    "IREE_RESOLVECOMSTR": "RESOLVE  $TARGET",
    "IREE_LISTINGCOMSTR": "LISTING  $TARGET",
    "IREE_CHECKCOMSTR": "CHECK    $SOURCE on $IREE_RUN_DEVICE",
    "IREE_ENTRYPOINTCOMSTR": "ENTRY    $TARGET",
    "IREE_WRAPPERCOMSTR": "WRAP     $TARGET",
    "IREE_RENAMECOMSTR": "RENAME   $TARGET",
    "IREE_OPTCOMSTR": "OPT      $TARGET",
    "IREE_DUMPLISTCOMSTR": "LIST     $TARGET",
    "IREE_BENCHCOMSTR": "BENCH    $TARGET",
    "IREE_BENCHREPORTCOMSTR": "REPORT   $TARGET",
    "IREE_HARNESSCOMSTR": "HARNESS  $TARGET",
    "IREE_HARNESSREFERENCECOMSTR": "HARNESS  $TARGET",
    "IREE_HARNESSMODULESCOMSTR": "HARNESS  $TARGET",
    "IREE_VERIFYCOMSTR": "VERIFY   $TARGET",
    "IREE_HOTSPOTBENCHCOMSTR": "HOTBENCH  $TARGET",
    "IREE_HOTSPOTKERNELSCOMSTR": "HOTKERNEL  $TARGET",
    "IREE_HOTSPOTSCOMSTR": "HOTSPOTS  $TARGET",
    "IREE_GEMMHEADERCOMSTR": "HEADER   $TARGET",
    "IREE_TIMINGSCOMSTR": "TIMINGS  $TARGET",
}


def declare_project(env, manifests=None):
    """Declare every module of the repo's manifests; see the module's docstring."""
    try:
        return _declare_project(env, manifests)
    except UserError as e:          # a tool's --version that hangs, a file that cannot be read
        fail(str(e))
    except TypeError as e:          # SCons: a folder where the build writes a file, or back
        found = _MISPLACED_RE.search(str(e))
        if not found:
            raise
        path = os.path.relpath(found.group(2), env.Dir("#").abspath)
        path = found.group(2) if path.startswith("..") else path      # outside the repository
        is_a, wanted = ("folder", "file") if found.group(1) == "Directory" else ("file", "folder")
        fail(f"{path} is a {is_a}, where the build writes a {wanted}; move it away")


_MISPLACED_RE = re.compile(r"^(Directory|File) (.*) found where (?:file|directory) expected\.$")


def _declare_project(env, manifests=None):
    read_variables(env)
    # Each step's SPAWN: no time limit here (WholeFileCommand gives each command its own).
    spawn = Spawn()
    env = env.Clone(SPAWN=spawn, PSPAWN=PSpawn(timeouts(env)),
                    ESCAPE=lambda arg: arg)
    list_every_step(env)                # scons -n: the steps after one that would run show too
    trust_settled_signatures(env["BUILD_DIR"])
    if not env["VERBOSE"]:
        env.Replace(**SHORT_COMSTRS)
        env.Replace(**{name: line for kind in KERNEL_KINDS.values()
                       for name, line in kind.short_lines})      # the kinds' tools' own
    if env["PROGRESS"]:
        SCons.Script.Progress(["-\r", "\\\r", "|\r", "/\r"], interval=25)
    env.IreeCacheDir()
    root = Path(env.Dir("#").abspath)
    if manifests is None:
        manifests = sorted(root.glob(env["MANIFESTS"]))
    try:
        project = load_project(root, manifests, env["BUILD_DIR"])
    except UserError as e:
        fail(str(e))
    project_settings.check_settings(env)
    if env["RELEASE_CHECK"]:
        imply(env, "check", by="release")     # its modules' checks are declared, then required
    selected = project_settings.selected_targets(env)
    archs = project_settings.architectures(env, selected)
    project_settings.check_options(env, project, archs, spawn.option_origins)
    build = env.Dir(f"#{env['BUILD_DIR']}")
    build_folder.lock(env, build)
    remote.attach(env)
    modules, check_nodes = [], []
    for model in project.models.values():
        model = env.IreeImportedModel(model, build.Dir("models"))   # .onnx, .pt2: reads its import
        for target in model.targets:
            if target not in selected:
                continue
            for n, where in enumerate(module_targets(TARGETS[target], archs.get(target, []))):
                declared = _declare_module(env, project, model, where, build)
                check_nodes += _declare_uses(env, declared, scaffolds=n == 0)
                modules.append(declared)
    env.Alias("modules", [m.module for m in modules])
    env.Alias("check", check_nodes)
    env.Alias("timings", [])            # a project without keep = "faster" families times nothing
    if env["SCAFFOLD"] and not project_settings.matches_glob(env["SCAFFOLD_MANIFEST"],
                                                             env["MANIFESTS"]):
        fail(f"SCAFFOLD_MANIFEST={env['SCAFFOLD_MANIFEST']} is not one of the manifests the "
              f"build reads (MANIFESTS={env['MANIFESTS']}); its entry would be ignored")
    if env["SCAFFOLD"] and not env.Alias("scaffold")[0].sources:
        fail(f"SCAFFOLD={env['SCAFFOLD']}: expected MODEL/TARGET/EXECUTABLE of a declared "
              f"model and target; models: {', '.join(sorted(project.models))}")
    if wanted(env, "expected") and not SCons.Script.GetOption("clean"):
        project_settings.check_expected(env, project, modules)
    env.IreeBench(build.Dir("bench").File("microbenchmarks.txt"))
    if wanted(env, "compile_commands"):
        env.IreeCompileCommands(env.File("#compile_commands.json"), modules)
    env.IreeRelease(modules)
    _declare_defaults(env, modules, build)
    if SCons.Script.GetOption("clean"):
        build_folder.declare_clean(env, build, root)
    return modules


def _declare_module(env, project, model, where, build) -> DeclaredModule:
    """One model for one target and architecture (``where``): front end, kernels, module."""
    here = build.Dir(where.folder).Dir(model.name)
    flags = [*where.flags, *REPRODUCIBLE_FLAGS, *model.options.get(where.target.name, ())]
    options = env.IreeOptionsFile(here.File("options.flags"), spec_value(env, flags))
    executables = env.IreeExecutableSources(here.File("executables.mlir"),
                                            [model.source, options])
    subs = tuple(project.substitutions_for(model.name, where.target.name))
    report = []
    if any(s.match for s in subs):          # families: one instance per executable taken
        # scons -h builds nothing, scons -c removes the build folder whole: no front end.
        skipped = SCons.Script.GetOption("help") or SCons.Script.GetOption("clean")
        found = {} if skipped else discovery.executables_of(env, model, flags, build)
        expanded, expansions = families.expand(list(subs), found, root=root_of(env),
                                               keep_all=wanted(env, "timings"))
        subs = tuple(expanded)
        report = env.IreeFamilies(here.File("families.txt"), spec_value(env, "".join(
            f"FAMILY   {e.describe()}\n" for e in expansions)))
    module_file = build.Dir(where.folder).File(f"{model.name}.vmfb")
    # Relinked: the executables from a compile of the model (on llvm-cpu, the unlinked one).
    model_node = executables[0].sources[0]
    unlinked = relinking.declare_unlinked_from_model(env, module_file, model_node, folder=here,
                                                     options=options,
                                                     target=where.target.name, subs=subs)
    # The steps that read only executables read them without the weights.
    ops = [unlinked.ops] if unlinked else \
        env.IreeExecutableOps(here.File(EXECUTABLE_OPS), executables) if subs else []
    # ... and what the checks read of them, without parsing MLIR again.
    listing = env.IreeExecutableListing(here.File(EXECUTABLE_LISTING), ops) if subs else []
    # Selectors land on executables only once the front end has run: see IreeResolve.
    resolved = env.IreeResolve(here.File("resolved.json"), [
        spec_value(env, [s.to_dict() for s in subs]), listing]) if subs else []
    missing = {s.key: _missing_program(env, s) for s in subs}
    kernels = {s.key: _declare_kernel(env, s, ops, listing, resolved, here, where, build,
                                      missing[s.key]) for s in subs}
    flag_file, record = _declare_substitutions(env, model, where, subs, listing, resolved,
                                               kernels, here)
    replacements = {key: made.replacement for key, made in kernels.items()
                    if made.replacement is not None}
    objects = {s.key: kernels[s.key].kernel for s in subs if s.mode == "object"}
    module = env.IreeModuleFromProgram(module_file, executables, target=where.target.name,
                                       options=options, substitutions=flag_file, subs=subs,
                                       replacements=replacements, resolved=resolved,
                                       objects=objects, unlinked=unlinked)
    env.Depends(module, report)             # what its families took, said before it is built
    # What the front end runs in: its own step, the executables' dumps, a compile of the model.
    from_model = [node for node in (module[0], module[0].sources[0])
                  if node.sources and node.sources[0] is model_node]
    _depend_on_option_files(env, model.options.get(where.target.name, ()),
                            [executables, *ops, *from_model], module)
    return DeclaredModule(model, where, here, options[0], executables[0], subs,
                          resolved[0] if resolved else None, kernels, flag_file, record,
                          module[0], tuple(sorted(set(filter(None, missing.values())))),
                          report[0] if report else None)


def _declare_uses(env, declared: DeclaredModule, scaffolds: bool) -> list:
    """What builds on a module: listing, scaffold, benchmarks, hotspots; returns its checks."""
    if wanted(env, "dump") or env["SCAFFOLD"]:
        listing = env.IreeDumpListing(declared)
        scaffold = env["SCAFFOLD"].split("/", 2)
        if scaffolds and scaffold[:2] == [declared.model.name, declared.target.name] and \
                len(scaffold) == 3:
            language = project_settings.scaffold_language(env["LANGUAGE"], declared.target.name)
            env.IreeScaffold(declared, listing, executable=scaffold[2], language=language,
                             manifest=env["SCAFFOLD_MANIFEST"])
    if declared.substitutions and wanted(env, "bench", "microbenchmarks", "timings"):
        benchmarks = env.IreeMicrobenchmarks(declared)
        if wanted(env, "timings"):
            env.IreeFamilyTimings(declared, benchmarks)
    if wanted(env, "hotspots"):
        env.IreeHotspots(declared)
    if scaffolds and declared.target.name == "llvm-cpu" and wanted(env, "expected") and \
            declared.model.name in project_settings.expected_models(env, [declared.model]):
        env.IreeExpectedOutputs(declared)
    checks = [env.IreeModuleCheck(declared)]
    if declared.substitutions and wanted(env, "verify", "check"):
        checks += env.IreeVerification(declared)
    return checks


def root_of(env) -> Path:
    return Path(env.Dir("#").abspath)


def _declare_substitutions(env, model, where, subs, listing, resolved, kernels, here):
    """substitutions.flags and substitutions.json: every kernel checked, then the flags."""
    checked = {KERNEL_KINDS[made.kernel.get_suffix()].checker
               for made in kernels.values() if made.kernel.get_suffix() in KERNEL_KINDS}
    checkers = {name: toolchains.checker(name) or "" for name in sorted(filter(None, checked))}
    spec = {"model": model.name, "target": where.target.name, "source": model.source,
            "substitutions": [s.to_dict() for s in subs],
            "paths": {key: {role: node.get_path() for role, node in
                            (("kernel", made.kernel), ("wrapper", made.wrapper)) if node}
                      for key, made in kernels.items()},
            "checks": _kernel_checks(env, where, checkers)}
    made = [node for declared in kernels.values() for node in declared.nodes]
    flag_file, record = env.IreeSubstitutions(
        here.File("substitutions.flags"),
        [spec_value(env, spec), *listing, *resolved, *made])
    env.Depends([flag_file, record], [tool_version(path, False, timeouts(env))
                                      for path in checkers.values() if path])
    return flag_file, record


def _kernel_checks(env, where, checkers: dict) -> dict:
    """substitution.KernelChecks' fields for the module: the variables the kinds' checks read
    (registry.KernelKind.check_settings; the module's architecture for its target's), and the
    checkers' paths."""
    settings = {name: env[name] for kind in KERNEL_KINDS.values()
                for name, _ in kind.check_settings if env.get(name) is not None}
    if where.target.arch_variable:
        settings[where.target.arch_variable] = where.arch
    return {"settings": settings, "checkers": checkers}


def _depend_on_option_files(env, flags, front_end, module) -> None:
    """Files the options' flags name (iree_kernels.project.option_files): front-end ones run the front
    end again (``front_end``: what runs it), codegen ones the module's compile and the step it
    is compiled from (the program's assembly, or the unlinked module)."""
    top = env.Dir("#")                  # Dir.File: the path is not substituted
    compiled_from = module[0].sources[0]
    codegen = [module[0], *([compiled_from] if compiled_from.has_builder() else [])]
    for path, phase in option_files.files_named(flags):
        node = env.fs.File(path) if Path(path).is_absolute() else top.File(path)
        env.Depends(front_end if phase == option_files.FRONT_END else codegen, node)


def _declare_kernel(env, sub, executables, listing, resolved, here, where, build,
                    missing: str) -> DeclaredKernel:
    """What the build makes for ``sub``: the kernel and, wrapped, its wrapper.

    ``missing``: the compiler ``sub`` needs and this machine lacks, or ''.
    Files are named after ``sub.key``: the executable's name is not known yet
    where the manifest selects it by export or fingerprint.
    """
    if sub.passes:                  # derived from the executable's own source by iree-opt
        return DeclaredKernel(env.IreeDerive(here.File(f"{file_name(sub.key)}.derived.mlir"),
                                             executables, sub=sub, resolved=resolved)[0])
    launch = []                     # what says the kernel's launch shape, where a file does
    if kernel_kind(sub.file).per_substitution:
        kernel, *launch = _declare_substitution_kernel(env, sub, listing, resolved, here,
                                                       where, missing)
    else:
        kernel = _declare_compiled_kernel(env, sub, resolved, here, where, build, missing)
    if sub.mode != "wrapped":
        return DeclaredKernel(kernel)
    wrapper = here.File(f"{file_name(sub.key)}.wrapper.mlir")
    spec = spec_value(env, {"substitution": sub.to_dict(), "kernel": kernel.get_path(),
                            "iree_release": toolchains.iree_release(env.subst("$IREE_COMPILE"))})
    return DeclaredKernel(kernel, env.IreeWrapper(wrapper, [spec, listing, resolved, *launch])[0])


def _declare_substitution_kernel(env, sub, listing, resolved, here, where,
                                 missing: str) -> list:
    """A kernel compiled for one substitution (its signature is the executable's layout):
    [the kernel, its launch metadata], in the module's folder, named after the key, declared
    by its kind (``KernelKind.declare``) with its tool's own builders."""
    kind = kernel_kind(sub.file)
    source = env.Dir("#").File(sub.file)
    built = here.File(f"{file_name(sub.key)}{kind.made_suffix(where.target.name)}")
    if missing:
        return [_missing_tool(env, built, source, missing)]
    return kind.declare(env, sub, source=source, built=built,
                        named=lambda suffix: here.File(f"{file_name(sub.key)}{suffix}"),
                        spec=spec_value(env, sub.to_dict()), listing=listing,
                        resolved=resolved, arch=where.arch)


def _declare_compiled_kernel(env, sub, resolved, here, where, build, missing: str):
    source = env.Dir("#").File(sub.file)
    kind = kernel_kind(sub.file)
    if kind.compiles_to is None and sub.mode == "source" and not sub.executable:
        # Its executable's name is the one it was copied from: rename it to the one selected.
        return env.IreeRenamedSource(here.File(f"{file_name(sub.key)}.source.mlir"),
                                     [source, resolved, env.Value(sub.key)])[0]
    if kind.compiles_to is None:
        return source
    if sub.facts:                   # a family's instance: with its executable's header
        return _declare_instance_kernel(env, sub, source, kind, here, where)
    # Compiled for one of several architectures: in that module's folder.
    kernels = build if where.folder == where.target.name else build.Dir(where.folder)
    built = kernels.File(Path(sub.file).with_suffix(kind.compiles_to).as_posix())
    if built.has_builder() and built.sources[0] != source:
        fail(f"{sub.origin.file}:{sub.origin.line}: {sub.origin.entry}: {sub.file} and "
              f"{built.sources[0]} would both compile to {built}; rename one of them")
    if missing:
        return _missing_tool(env, built, source, missing)
    compiler = kernel_compiler(env, kind.suffix)
    arch = {compiler.arch_variable: where.arch} if compiler.arch_variable else {}
    kernel = env.Kernel(built, source, **arch)[0]
    if not kind.entry_point_main:
        return kernel
    named = here.File(f"{file_name(sub.key)}{kind.compiles_to}")
    return env.IreeSpirvEntryPoint(named, [kernel, resolved, env.Value(sub.key)])[0]


def _declare_instance_kernel(env, sub, source, kind, here, where):
    """A family's kernel compiled for one executable: in the module's folder, named after it,
    with that executable's iree_gemm.h (``kinds.gemm_interface``) on its include path."""
    folder = here.Dir(file_name(sub.key))
    spec = {"facts": sub.facts, "executable": sub.executable, "model": sub.model,
            "target": sub.target, "cuda": sub.target == "cuda",
            "where": f"{sub.origin.file}:{sub.origin.line}: {sub.origin.entry}"}
    header = env.IreeGemmHeader(folder.File(gemm_interface.HEADER), spec_value(env, spec))
    compiler = kernel_compiler(env, kind.suffix)
    overrides = {compiler.include_variable: [folder, *env.get(compiler.include_variable, [])]}
    if compiler.arch_variable:
        overrides[compiler.arch_variable] = where.arch
    kernel = env.Kernel(here.File(f"{file_name(sub.key)}{kind.compiles_to}"), source,
                        **overrides)
    env.Depends(kernel, header)
    return kernel[0]


def _missing_tool(env, built, source, program: str):
    """A node that fails with how to install ``program``."""
    return env.Command(built, source, failing(f"{source}: {toolchains.missing_message(program)}"))[0]


def _missing_program(env, sub) -> str:
    """The program ``sub`` needs and this machine lacks (compiler, then checker), or ''."""
    if sub.passes:
        return "" if env.WhereIs(env.subst("$IREE_OPT")) or \
            Path(toolchains.real_program(env.subst("$IREE_OPT"))).is_file() else "iree-opt"
    kind = kernel_kind(sub.file)
    compiler = kernel_compiler(env, kind.suffix)
    if compiler:
        name, path = compiler.program(env)
        if not path:
            return name
    made = kind.made_suffix(sub.target)
    checked = KERNEL_KINDS[made] if made else kind
    if checked.checker and not toolchains.checker(checked.checker):
        return checked.checker
    return ""


def _declare_defaults(env, modules: list[DeclaredModule], build):
    """Build what this machine can; then fail, naming each module a missing tool stops."""
    if not any(m.missing_tools for m in modules):
        SCons.Script.Default("modules")
        return
    buildable = [m.module for m in modules if not m.missing_tools]
    by_program = {}
    for declared in modules:
        for program in declared.missing_tools:
            by_program.setdefault(program, []).append(str(declared.module))
    reasons = "; ".join(f"{toolchains.missing_message(program)}; not built: {', '.join(built)}"
                        for program, built in by_program.items())
    report = env.Command(build.File(".missing-tools"), buildable, failing(reasons))
    env.AlwaysBuild(report)
    SCons.Script.Default(buildable + report)


def generate(env):
    kernel_tools = dict.fromkeys(kind.tool for kind in KERNEL_KINDS.values() if kind.tool)
    for tool in ("iree_compile", "iree_opt", "iree_substitutions", "iree_run", *kernel_tools, "iree_dump",
                 "iree_bench", "iree_hotspots", "iree_scaffold", "iree_compile_commands",
                 "iree_cache", "iree_release", "iree_program", "iree_relink", "onnx_import", "torch_import",
                 "iree_verify", "iree_expected", "iree_families"):
        env.Tool(tool)
    env.AddMethod(declare_project, "IreeKernelProject")


def exists(env):
    return True

