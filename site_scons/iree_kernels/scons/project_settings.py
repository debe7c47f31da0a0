"""The command line checked against the project before anything is declared: targets,
architectures, iree-compile's options, EXPECTED, SCAFFOLD and LANGUAGE.

Each check fails the build with one line (``reporting.fail``) or raises the
manifest's UserError naming file, entry and field; none declares a step.

Not for: declaring the modules (``site_tools/iree_project.py``), the variables
themselves and their help (``iree_kernels.settings``, ``variables``).
"""
from __future__ import annotations

import re
from pathlib import Path

from iree_kernels.core import toolchains
from iree_kernels.core.files import not_regular
from iree_kernels.ir.targets import TARGETS, module_targets, parse_archs, rejected_arch_message
from iree_kernels.project import option_files
from iree_kernels.core.errors import closest
from iree_kernels.project.scaffold import languages, target_languages
from iree_kernels.scons.reporting import fail
from iree_kernels.scons.spawn import timeouts


def matches_glob(path: str, pattern: str) -> bool:
    """Whether ``path`` is one Path.glob(``pattern``) would find, were it there."""
    regex = ""
    for part in re.split(r"(\*\*/|\*|\?)", pattern):
        regex += {"**/": "(?:.*/)?", "*": "[^/]*", "?": "[^/]"}.get(part, re.escape(part))
    return re.fullmatch(regex, path) is not None


def check_settings(env) -> None:
    if not re.fullmatch(r"\d+\.\d+", env["PTX_ISA_VERSION"]):
        fail(f"PTX_ISA_VERSION={env['PTX_ISA_VERSION']}: expected MAJOR.MINOR, e.g. 9.0")


def architectures(env, selected: list[str]) -> dict:
    """Target name -> its architectures (CUDA_ARCH, HIP_ARCH); each one iree-compile accepts.

    One outside the table of what IREE 3.12 and 3.13 accept is asked of
    iree-compile (a source-built IREE may have more); only then does it cost a run.
    """
    archs = {}
    for target in TARGETS.values():
        if not target.arch_variable:
            continue
        try:
            archs[target.name] = parse_archs(target, env[target.arch_variable])
        except ValueError as e:
            fail(str(e))
        if target.name not in selected:
            continue
        for arch in archs[target.name]:
            if arch in target.known_archs:
                continue
            compiler = env.subst("$IREE_COMPILE")
            error = toolchains.target_error(compiler, target.flags(arch), timeouts(env))
            if error:
                fail(rejected_arch_message(target, arch)
                     + f" (iree-compile: {error.rpartition('error: ')[2]})")
        env[target.arch_variable] = archs[target.name][0]     # what $PTXCOM says unless told
    return archs


def selected_targets(env) -> list[str]:
    selected = [t.strip() for t in env["IREE_TARGETS"].split(",") if t.strip()]
    for t in selected:
        if t not in TARGETS:
            fail(f"IREE_TARGETS: unknown target '{t}'; known targets: {', '.join(TARGETS)}")
    return selected




def expected_models(env, models) -> list[str]:
    """The models 'scons expected' writes for: those EXPECTED names, or every one without any."""
    named = [m.strip() for m in env["EXPECTED"].split(",") if m.strip()]
    return [m.name for m in models if (m.name in named if named else m.expected is None)]


def check_expected(env, project, modules) -> None:
    """EXPECTED names declared models, each with an llvm-cpu module to be the reference."""
    named = [m.strip() for m in env["EXPECTED"].split(",") if m.strip()]
    for name in named:
        if name not in project.models:
            fail(f"EXPECTED={env['EXPECTED']}: no model '{name}'{closest(name, project.models)}; "
                 f"models: {', '.join(sorted(project.models))}")
    references = {m.model.name for m in modules if m.target.name == "llvm-cpu"}
    for name in expected_models(env, project.models.values()):
        if name not in references:
            fail(f"scons expected: model '{name}' has no llvm-cpu module to be the reference "
                 "(add llvm-cpu to its targets, and to IREE_TARGETS)")
    if not env.Alias("expected")[0].sources:
        fail("scons expected: every model has expected outputs; name one in EXPECTED=... to "
             "write it again (after moving its file away)")


def check_options(env, project, archs: dict, origins: dict) -> None:
    """Every model's options are flags iree-compile has (asked once, only where there are options).

    Records where each is set in ``origins`` (the steps' Spawn.option_origins), for an error
    iree-compile gives about its value.
    """
    for model in project.models.values():
        for target, flags in model.options.items():
            known = toolchains.compiler_options(env.subst("$IREE_COMPILE"), timeouts(env)) \
                if flags else None
            origin = model.origin.error("", "options")
            for where in module_targets(TARGETS[target], archs.get(target, [])):
                flag_file = env.Dir(f"#{env['BUILD_DIR']}").Dir(where.folder).Dir(
                    model.name).File("options.flags").get_path()
                origins[flag_file] = {
                    f.lstrip("-").split("=", 1)[0]: f"{origin}options.{target}" for f in flags}
            root = env.Dir("#").abspath
            for path, _ in option_files.files_named(flags):
                why = not_regular(Path(root, path))
                if why:
                    raise model.origin.error(f"options.{target}: {path} (relative to the "
                                             f"repository root) {'does not exist' if why == 'not found' else 'is ' + why}",
                        "options")
            for flag in flags:
                name = toolchains.unknown_option(flag, known)
                if name:
                    close = closest(name, known)
                    raise model.origin.error(
                        f"options.{target}: iree-compile has no option '--{name}'"
                        + close.replace(" (did you mean '", " (did you mean '--"), "options")



def scaffold_language(language: str, target: str) -> str:
    """LANGUAGE, or the target's own language where it is empty; one that does not fit fails."""
    known, defaults = languages(), target_languages()
    if not language:
        return defaults[target]
    if language not in known:
        fail(f"LANGUAGE={language}: unknown language; languages: {', '.join(known)}")
    fits = known[language].scaffold.targets
    if fits is not None and target not in fits:
        fail(f"LANGUAGE={language} writes kernels for target "
             f"{' or '.join(repr(f) for f in fits)}, not '{target}'; for {target} leave "
             f"LANGUAGE out ({defaults[target]}) or give mlir")
    return language