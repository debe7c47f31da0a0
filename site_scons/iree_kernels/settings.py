"""The command-line variables (``scons NAME=value``): one record each, the only place they are declared.

The SCons tool iree_project builds ``scons -h`` and its Variables from SETTINGS;
``python -m iree_kernels.settings --markdown > docs/variables.md`` writes the
reference. Tools and the library take a variable's default from here
(``default("NAME")``); per-target defaults (the GPU architectures) stay in
``targets.TARGETS`` and are read from there.
"""
from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from typing import Mapping

from iree_kernels.check.benchmarks import BENCHMARK_FLAGS
from iree_kernels.core.toolchains import TIMEOUT_DEFAULTS
from iree_kernels.module.codegen_cache import EXECUTABLE_CACHE_TARGETS
from iree_kernels.cache.integrity import KEY_FILE_VARIABLE, KEY_VARIABLE
from iree_kernels.cache.remote_cache import MAX_BLOB_MIB, MAX_RETRIES, URL_VARIABLE, redact
from iree_kernels.project.scaffold import languages, target_languages
from iree_kernels.ir.targets import PTX_ISA_VERSION, TARGETS

ON_A_TERMINAL = "on a terminal"     # a boolean's default: yes where the output is a terminal
_CODEGEN_FOLDER = "$BUILD_DIR/codegen-cache"
_PTX_ISA = PTX_ISA_VERSION
_PATH, _ESCAPED = "refused in a path", "escaped"


@dataclass(frozen=True)
class Setting:
    name: str
    help: str
    default: str = ""
    kind: str = "text"                   # text, bool (yes/no) or enum (one of ``allowed``)
    allowed: tuple[str, ...] = ()
    environment: str = ""                # an environment variable that, where set, is the default
    # What a '$' in the value gets (SCons evaluates ``${...}`` in variables' values): a path
    # or any other value refuses it; free text (an executable name, a filter) has it escaped.
    dollar: str = "refused"              # refused, refused in a path, escaped
    # A URL that may hold ``user:password@`` (refused, but never shown): messages and
    # ``scons -h`` show it through ``shown``.
    url: bool = False

    def shown(self, value: str) -> str:
        """``value`` as messages and ``scons -h`` print it: a URL without its credentials."""
        return redact(value) if self.url and isinstance(value, str) else value

    def default_value(self, environ: Mapping[str, str] = os.environ,
                      terminal: bool | None = None) -> str:
        """The default where scons runs now (the environment, whether stdout is a terminal)."""
        if self.environment and environ.get(self.environment):
            return environ[self.environment]
        if self.default == ON_A_TERMINAL:
            return "yes" if (sys.stdout.isatty() if terminal is None else terminal) else "no"
        return self.default


def _seconds(what: str, default: str, limit: bool = True) -> dict:
    return {"help": f"seconds {what}" + (" (0: no limit)" if limit else ""), "default": default}


SETTINGS: tuple[Setting, ...] = (
    Setting("IREE_TARGETS", "comma-separated targets to build, of those each model lists ("
            + ", ".join(TARGETS) + ")",
            ",".join(TARGETS)),
    Setting("BUILD_DIR", "where everything built goes: a folder inside the repository, "
            "relative to its root (an absolute path, or one leaving the repository, is refused: "
            "command lines, compile_commands.json and lock records name files relative to the "
            "root)", "build", dollar=_PATH),
    Setting("MANIFESTS", "glob of kernel manifests, relative to the repository root",
            "kernels/**/*.toml", dollar=_PATH),
    Setting("VERBOSE", "print full command lines", "no", "bool"),
    Setting("PROGRESS", "show a spinner while SCons looks at nodes "
            "(default: when the output is a terminal)", ON_A_TERMINAL, "bool"),
    Setting("CHECK_STRICT", "make 'scons check' fail where it skips a check "
            "(no device, no expected outputs, no case for the target)", "no", "bool"),
    Setting("CUDA_COMPILER", "compiler of .cu kernels", "nvcc", "enum", ("nvcc", "clang")),
    Setting("CUDA_ARCH", "comma-separated CUDA architectures (IREE's --iree-cuda-target, "
            "nvcc's and ptxas' -arch): one module per model and architecture, in "
            "build/cuda-<arch>/ where there are several", TARGETS["cuda"].default_arch),
    Setting("HIP_ARCH", "comma-separated AMD GPU architectures (IREE's --iree-rocm-target, "
            "clang's --offload-arch): one module per model and architecture, in "
            "build/hip-<arch>/ where there are several", TARGETS["hip"].default_arch),
    Setting("PTX_ISA_VERSION", "newest PTX ISA version the CUDA driver that runs the "
            f"modules loads ({_PTX_ISA}: CUDA 13.0, driver 580)", _PTX_ISA),
    Setting("GLSL_COMPILER", "compiler of GLSL shaders", "glslang", "enum", ("glslang", "glslc")),
    Setting("DUMP", "what 'scons dump' writes: any of sources, configurations, binaries, "
            "benchmarks", "sources"),
    Setting("IREE_BENCHMARKFLAGS", "iree-benchmark-module flags of 'scons bench'",
            BENCHMARK_FLAGS, dollar=_ESCAPED),
    Setting("REMEASURE", "make 'scons bench' time every kernel again (by default a kernel "
            "whose files, executable, options, device, flags and tools are unchanged keeps "
            "its timing)", "no", "bool"),
    Setting("IREE_HOTSPOTFLAGS", "iree-benchmark-module flags of 'scons hotspots'",
            "--benchmark_repetitions=5 --benchmark_min_time=0.01s --batch_size=4"),
    Setting("SCAFFOLD", "for 'scons scaffold': MODEL/TARGET/EXECUTABLE to write a kernel "
            "skeleton for; EXECUTABLE is a name (quoted where it holds '$'), a number (3: "
            "*_dispatch_3) or an export glob", dollar=_ESCAPED),
    Setting("LANGUAGE", "for 'scons scaffold': the skeleton's language: "
            f"{', '.join(languages())}; empty: the target's own ("
            + ", ".join(f"{lang} for {t}" for t, lang in target_languages().items()) + ")"),
    Setting("EXPECTED", "for 'scons expected': comma-separated models to write expected "
            "outputs for; empty: every model that has none"),
    Setting("SCAFFOLD_MANIFEST", "for 'scons scaffold': the manifest its entry is appended to",
            "kernels/scaffolded.toml", dollar=_PATH),
    Setting("IREE_COMPILE_TIMEOUT", **_seconds("an iree-compile run may take",
                                               TIMEOUT_DEFAULTS["IREE_COMPILE_TIMEOUT"])),
    Setting("KERNEL_COMPILE_TIMEOUT", **_seconds(
        "a kernel compiler or checker (nvcc, clang, glslang, ptxas, spirv-val) may take",
        TIMEOUT_DEFAULTS["KERNEL_COMPILE_TIMEOUT"])),
    Setting("RUN_TIMEOUT", **_seconds(
        "an iree-run-module or iree-benchmark-module run may take", TIMEOUT_DEFAULTS["RUN_TIMEOUT"])),
    Setting("VERSION_TIMEOUT", **_seconds("a tool may take to print its --version",
                                          TIMEOUT_DEFAULTS["VERSION_TIMEOUT"], limit=False)),
    Setting("LOCK_WAIT", **_seconds("to wait for another scons building in this checkout", "10",
                                    limit=False)),
    Setting("CACHE_DIR", "build cache folder shared between checkouts (environment: "
            "IREE_KERNELS_CACHE_DIR); empty: no cache", environment="IREE_KERNELS_CACHE_DIR",
            dollar=_PATH),
    Setting("CACHE_READONLY", "take files from the cache but never write to it", "no", "bool"),
    Setting("CACHE_REQUIRE_SIGNED", "fail unless the cache signing key is configured "
            f"({KEY_FILE_VARIABLE} or {KEY_VARIABLE}); with a key, entries not signed with it "
            "are never taken", "no", "bool"),
    Setting("REMOTE_CACHE_URL", "HTTP(S) remote cache in Bazel's layout (/cas/, /ac/) shared by "
            f"SCons's cache and the codegen cache (environment: {URL_VARIABLE}); empty: none",
            environment=URL_VARIABLE, url=True),
    Setting("REMOTE_CACHE_READONLY", "take entries from the remote cache, never upload",
            "no", "bool"),
    Setting("REMOTE_CACHE_TIMEOUT", "seconds a remote cache request may take, whatever the "
            "server does (plus a second per MiB transferred; at most 3600)", "10"),
    Setting("REMOTE_CACHE_RETRIES", "more attempts after a remote cache request failed "
            f"(at most {MAX_RETRIES})", "2"),
    Setting("REMOTE_CACHE_MAX_MIB", "MiB a file taken from the remote cache may have (it is "
            "held in memory): a larger one is built, not downloaded, and not uploaded",
            str(MAX_BLOB_MIB)),
    Setting("ALLOW_DIRTY", "let 'scons release' release a checkout with uncommitted changes "
            "(the lock record names them); without it such a release is refused", "no", "bool"),
    Setting("RELEASE_CHECK", "make 'scons release' build only after a passing 'scons check', "
            "strict as with CHECK_STRICT=yes", "no", "bool"),
    Setting("ARCHIVE", "release archive that verify-release checks this checkout against",
            dollar=_PATH),
    Setting("EXECUTABLE_CACHE", "targets whose executables go through the per-executable "
            "codegen cache: comma-separated (cuda, vulkan, llvm-cpu), 1 for all, 0 for none; "
            "default: " + (", ".join(EXECUTABLE_CACHE_TARGETS) or "none"), "default"),
    Setting("RELINK", "build modules with executables unlinked, so that a kernel edit replaces "
            "only that executable's binary in the model's unlinked module instead of compiling "
            "the model again: MLIR source kernels, wrapped kernels, CUDA and Vulkan objects "
            "(docs/building.md; 'scons release' still compiles linked modules)", "yes", "bool"),
    Setting("CODEGEN_CACHE_DIR", "folder of the per-executable codegen cache; may be shared by "
            "checkouts; default: CACHE_DIR's codegen/ where CACHE_DIR is set (read only with "
            f"CACHE_READONLY, compiling into {_CODEGEN_FOLDER}), else {_CODEGEN_FOLDER}",
            dollar=_PATH),
    Setting("DASK_SCHEDULER", "Dask scheduler (tcp://host:port, tls://...) whose workers run "
            "the build's iree-compile steps (environment: IREE_KERNELS_DASK_SCHEDULER; "
            "docs/remote.md); empty: every step runs here",
            environment="IREE_KERNELS_DASK_SCHEDULER"),
    Setting("DASK_CONNECT_TIMEOUT", **_seconds("to reach DASK_SCHEDULER before the steps run "
                                               "here", "10", limit=False)),
    Setting("DASK_REQUIRED", "fail where DASK_SCHEDULER cannot be reached or no worker has "
            "a step's tool, instead of running the step here", "no", "bool"),
)
BY_NAME = {setting.name: setting for setting in SETTINGS}


def default(name: str) -> str:
    """The default of the command-line variable ``name``, for tools used without iree_project."""
    return BY_NAME[name].default


def markdown() -> str:
    """docs/variables.md: every variable, its default and values, and what it does."""
    rows = []
    for s in SETTINGS:
        shown = {"": "empty", ON_A_TERMINAL: "yes on a terminal, else no"}.get(s.default,
                                                                             f"`{s.default}`")
        if s.environment:
            shown = f"`${s.environment}`, else {shown}"
        values = {"bool": "yes, no", "enum": ", ".join(s.allowed)}.get(s.kind, "")
        rows.append(f"| `{s.name}` | {shown} | {values} | {_escape(s.help)} |")
    return "\n".join([
        "# Command-line variables",
        "",
        "Set them on the command line, `scons NAME=value`; `scons -h` lists them with the",
        "values in effect. A name scons does not know stops the build.",
        "",
        "This page is generated from the table in `site_scons/iree_kernels/settings.py`:",
        "change a variable there, then regenerate the page with",
        "`PYTHONPATH=site_scons ./setup.sh python -m iree_kernels.settings --markdown > docs/variables.md`",
        "(`tests/unit/test_settings.py` fails while it is stale).",
        "",
        "| variable | default | values | what it does |",
        "|---|---|---|---|",
        *rows,
        "",
    ])


def _escape(text: str) -> str:
    """Plain text as a Markdown table cell: no HTML tags, no column breaks."""
    return text.replace("<", "&lt;").replace(">", "&gt;").replace("|", "&#124;")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--markdown", action="store_true", required=True,
                        help="print docs/variables.md")
    parser.parse_args(argv)
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
