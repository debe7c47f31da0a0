"""The command-line variables (``scons NAME=value``) and what ``scons -h`` prints.

One SCons variable per record of ``iree_kernels.settings.SETTINGS``, each
value checked before SCons may substitute it; the targets' help lines
(TARGET_HELP). Not for what a variable does: the tools read the values.
"""
from __future__ import annotations

import functools
import os
import unicodedata
from pathlib import Path

import SCons.Script
import SCons.Variables
from SCons.Script import BoolVariable, EnumVariable, Variables

from iree_kernels import settings
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError, closest
from iree_kernels.settings import BY_NAME, SETTINGS, Setting
from iree_kernels.scons.escaping import escape
from iree_kernels.scons.reporting import fail


# What scons -h lists under "Targets": every alias the tools declare, one line each.
TARGET_HELP = {
    "modules": "every model's module for every selected target: build/<target>/<model>.vmfb "
               "(the default)",
    "check": "the modules, then their expected-output cases on each target's device and "
             "every differential check (verify)",
    "verify": "each substituted executable checked against IREE's own (differential checks)",
    "dump": "every model's executables, listed with their layouts and fingerprints (see DUMP)",
    "microbenchmarks": "each substituted executable's microbenchmarks, one JSON per module",
    "bench": "the microbenchmarks, then one table: kernel against IREE's own executable",
    "hotspots": "where each model's time goes, executable by executable",
    "timings": "each instance of a keep = \"faster\" family timed beside IREE's executable, "
               "into the family's timings file (on the device; checked in)",
    "scaffold": "a kernel skeleton and its manifest entry (SCAFFOLD, LANGUAGE)",
    "expected": "expected outputs from IREE's plain llvm-cpu compile, for each model without "
                "any (or those EXPECTED names)",
    "release": "every module in one archive, with what built it",
    "verify-release": "this checkout rebuilt and compared with a release archive (ARCHIVE)",
    "compile_commands.json": "clangd's compilation database of the .cu and .c kernels",
}


def read_variables(env) -> Variables:
    """SCons's Variables, one per record of iree_kernels.settings.SETTINGS, read from the command line."""
    variables = Variables(None, {})
    variables.FormatVariableHelpText = functools.partial(_help_text, variables)
    for setting in SETTINGS:
        variables.Add(_variable(setting))
    arguments = SCons.Script.ARGUMENTS
    variables.Update(env, safe_arguments(variables, arguments))
    SCons.Script.Help(_help(variables.GenerateHelpText(env)))
    for key in arguments:
        if key not in variables.keys():
            fail(f"unknown command-line variable {key!r}{closest(key, variables.keys())}; "
                 "see scons -h")
    # Read by Python only (the scaffold step escapes it where SCons prints it).
    env["SCAFFOLD"] = arguments.get("SCAFFOLD", "")
    try:
        toolchains.Timeouts.from_values(env)
    except UserError as e:
        fail(str(e))
    _check_build_dir(env["BUILD_DIR"])
    manifests = env["MANIFESTS"]
    if os.path.isabs(manifests) or ".." in Path(manifests).parts or not manifests:
        fail(f"MANIFESTS={manifests}: a glob of files inside the repository, relative to its "
             "root (e.g. kernels/**/*.toml)")
    for name in ("LOCK_WAIT", "DASK_CONNECT_TIMEOUT"):
        try:
            toolchains.seconds(env[name])
        except ValueError:
            fail(f"{name}={env[name]}: expected a number of seconds")
    return variables


def _check_build_dir(value: str) -> None:
    """BUILD_DIR is a folder inside the repo, named relative to its root: every path the build
    writes (command lines, compile_commands.json, lock records) is named relative to the root."""
    normal = os.path.normpath(value) if value else ""
    if os.path.isabs(value) or value.startswith("~"):
        fail(f"BUILD_DIR={value}: an absolute path; give a folder inside the repository, "
             "relative to its root (e.g. build or out/build), and link it elsewhere if need be")
    if normal in ("", ".") or normal.split(os.sep)[0] == "..":
        fail(f"BUILD_DIR={value!r}: not a folder inside the repository; give one relative to "
             "its root, e.g. build")
    if ".git" in normal.lower().split(os.sep):
        fail(f"BUILD_DIR={value}: inside the repository's .git folder, which holds its history; "
             "give another folder, e.g. build")


def _variable(setting: Setting) -> tuple:
    """One SCons variable; a boolean's default as the word scons -h shows ("no", not False)."""
    value = setting.default_value()
    if setting.kind == "bool":
        return BoolVariable(setting.name, setting.help, value)
    if setting.kind == "enum":
        return EnumVariable(setting.name, setting.help, value, allowed_values=setting.allowed)
    return (setting.name, setting.help, value)


def _help(variables_text: str) -> str:
    """What scons -h prints: targets, then variables; SCons adds where its own options are (-H)."""
    width = max(map(len, TARGET_HELP))
    targets = "".join(f"  {name:<{width}}  {what}\n" for name, what in TARGET_HELP.items())
    return ("usage: scons [OPTIONS] [VARIABLE=VALUE ...] [TARGET ...]\n\n"
            f"Targets (or any file the build makes, e.g. build/llvm-cpu/mlp.vmfb):\n{targets}\n"
            f"Variables:\n{variables_text}")


def _help_text(variables, env, key, help, default, actual, aliases=None) -> str:
    """SCons's text for one variable, a boolean's value written yes/no as docs/variables.md does."""
    if default in ("yes", "no"):          # SCons shows the converted value: True, False
        actual = {"True": "yes", "False": "no"}.get(str(actual), actual)
    setting = BY_NAME.get(key)
    if setting is not None:               # a URL's user:password@ is never shown
        default, actual = setting.shown(default), setting.shown(actual)
    return SCons.Variables.Variables.FormatVariableHelpText(variables, env, key, help, default, actual, aliases)


def safe_arguments(variables, arguments: dict) -> dict:
    """The command line's ``NAME=value`` pairs as SCons may substitute them.

    SCons substitutes variables' values (converters, validators, ``scons -h``)
    and evaluates ``${...}`` in them as Python. Control characters are refused
    everywhere; '$' is refused in every value but free text, where it is
    escaped (``$$``): ``settings.Setting.dollar``. Defaults are checked too: one
    comes from the environment (IREE_KERNELS_CACHE_DIR).
    """
    safe = {}
    for option in variables.options:
        given = option.key in arguments
        value = arguments.get(option.key, option.default)
        if not isinstance(value, str):
            continue
        shown = settings.BY_NAME[option.key].shown(value)
        where = f"{option.key}={shown!r}" if given else \
            f"{option.key} (default {shown!r}, from the environment)"
        bad = next((c for c in value if unicodedata.category(c) == "Cc"), None)
        if bad:
            fail(f"{where}: contains the control character {bad!r}")
        dollar = settings.BY_NAME[option.key].dollar
        if "$" in value and dollar != "escaped":
            kind = "a path" if dollar == "refused in a path" else "a value"
            fail(f"{where}: '$' is not allowed in {kind} here (SCons would expand it)")
        if given:
            safe[option.key] = escape(value)
    return safe
