"""A cache of IREE's codegen with one entry per executable, keyed by the executable's content.

What for: rebuilding a module after an edit compiles only the executables the
edit changed. The program dumped at IREE's executable-sources phase is split
into its ``hal.executable`` ops. Each is keyed by its text with its own name
replaced by a placeholder, plus the compiler's version and flags, so an
executable that an edit elsewhere only renumbered still hits. Misses are
compiled in batches, each executable under a name made from its key:
translated (``--compile-to=executable-targets``) and, on GPU targets,
serialized to one ``.ptx``/``.spv`` each (``--iree-hal-link-executables=false``).

An entry is, on GPU targets, that binary plus the translated executable without
its code (``builtin.module``): the export ops whole, with the launch shape
codegen chose (count region, workgroup size, subgroup size, workgroup memory).
The module is assembled by putting, in place of each cached executable of the
program, a stand-in: that translated executable renamed back, its variant
linking the binary renamed back (``objects([...])`` with exactly one object, as
external CUDA and Vulkan variants take, its bytes embedded in the program).
iree-compile resumes from there (``--compile-from=executable-sources``) and
runs no codegen for it. Translated MLIR is never put back with its code on GPU
targets: CUDA would re-translate it into a wrong kernel without an error, Vulkan
crashes. On llvm-cpu, which cannot link a cached ELF as an object, the entry is
the translated executable with its code, which iree-compile takes as is; the
linked ELF is still serialized.

Not for: choosing what to rebuild (SCons), finding the tools (``toolchains``).
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from iree_kernels.binaries import spirv
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError
from iree_kernels.core.files import is_regular, scratch_folder
from iree_kernels.ir.fingerprints import PLACEHOLDER, name_pattern, normalized
from iree_kernels.ir.program import EmbeddedObject, Program, ProgramExecutable
from iree_kernels.cache.remote_cache import RemoteCache
from iree_kernels.cache.store import Entry as StoredEntry, Refused, Store

# The binary iree-compile serializes one executable of a target to; "" where
# the entry keeps the translated code instead.
TARGET_BINARIES = {"cuda": ".ptx", "vulkan": ".spv", "llvm-cpu": ""}
FORMAT = "iree-kernels codegen cache 4"


THREADING_OFF = ("--mlir-disable-threading",)    # not part of any key: it changes no output

_CACHEABLE_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_$]*$")
_VARIANT_RE = re.compile(r"^ *hal\.executable\.variant ", re.M)
_EXPORT_RE = re.compile(r"^ *hal\.executable\.export (?:public )?@([A-Za-z0-9_$.]+) ", re.M)
_EMBEDDED_RE = re.compile(r'objects\(\[#hal\.executable\.object<\{path = "[^"]*", data = dense<"0x([0-9A-F]*)">')
_SUBGROUP_SIZE_RE = re.compile(r"^ *\} <.*\bsubgroup_size = ", re.M)


def not_cacheable(executable: ProgramExecutable) -> str | None:
    """Why ``executable`` must go through codegen in the module's own compile; None: it need not."""
    if not _CACHEABLE_NAME_RE.match(executable.name):
        return "its name needs quoting in MLIR"
    if PLACEHOLDER in executable.text:
        return f"it contains '{PLACEHOLDER}'"
    if len(_VARIANT_RE.findall(executable.text)) != 1:
        return "it has more than one variant"
    if "objects([" in executable.text:
        return "it already links external objects"
    if "dense_resource<" in executable.text:
        return "it refers to resources outside the op"
    return None


def entry_key(normalized: str, compiler_version: str, flags: list[str]) -> str:
    """The SHA-256 naming a cache entry: the format, the compiler, its flags, the normalized source."""
    digest = hashlib.sha256()
    for part in (FORMAT, compiler_version, *flags, "", normalized):
        digest.update(part.encode("utf-8") + b"\n")
    return digest.hexdigest()


def compiled_name(key: str) -> str:
    """The name an entry's executable is compiled under: unique, fixed length, a valid symbol."""
    return f"cached_{key[:24]}"


# Where the codegen cache is on unless EXECUTABLE_CACHE says otherwise.
EXECUTABLE_CACHE_TARGETS: tuple[str, ...] = ()


@dataclass(frozen=True)
class Entry:
    """A cache entry's files: ``<key>.source.mlir``, ``<key>.executable.mlir`` and, on GPUs, ``<key>.ptx|.spv``.

    Those a build takes are a ``store.Entry`` of ``store``, recorded in
    ``<key>.sha256``; only regular files are taken, a link is never followed.
    """
    folder: Path
    key: str
    binary_suffix: str        # "" on llvm-cpu
    # What this build may do with the folder: sign, verify, only read, fetch, upload.
    store: Store = field(default_factory=Store, compare=False)

    @property
    def source(self) -> Path:
        """What was compiled: the normalized source under the entry's compiled name."""
        return self.folder / f"{self.key}.source.mlir"

    @property
    def binary(self) -> Path:
        return self.folder / f"{self.key}{self.binary_suffix}"

    @property
    def translated(self) -> Path:
        """The translated executable (without its code on GPUs)."""
        return self.folder / f"{self.key}.executable.mlir"

    @property
    def used(self) -> tuple[Path, ...]:
        """The files a build takes from the entry."""
        return (self.translated, self.binary) if self.binary_suffix else (self.translated,)

    @property
    def files(self) -> StoredEntry:
        return StoredEntry(self.folder, self.key, tuple(p.name for p in self.used))

    @property
    def digests(self) -> Path:
        """The digest record of the files a build takes."""
        return self.files.record

    @property
    def refused(self) -> Path:
        """Why the executable cannot stand in as an external object; it then goes through codegen."""
        return self.folder / f"{self.key}.refused"

    def exists(self) -> bool:
        """Whether the digest record and the files it covers are there, as regular files."""
        return self.files.whole()

    def damage(self) -> str | None:
        """Why the entry's files are not what was stored (None: they are)."""
        try:
            self.store.read(self.files)
        except Refused as e:
            return str(e)
        return None

    def contents(self) -> dict[str, bytes]:
        """The files a build takes, by name, each read once and checked against the digest record.

        What a stand-in is made of: a file swapped after ``damage()`` passed it is refused here.
        """
        try:
            return self.store.read(self.files)
        except Refused as e:
            raise UserError(f"codegen cache entry {self.digests} changed while this build read "
                            f"it ({e}); build again") from None

    def publish(self, contents: dict[Path, bytes | Path]) -> None:
        """Store the files a build takes (path -> content, or a file to copy) with their digest record."""
        self.store.publish(self.files, {path.name: data for path, data in contents.items()})

    def record_digests(self) -> None:
        """Store the files a build takes as they are now in the folder."""
        self.publish({path: path for path in self.used})

    def source_text(self, normalized_text: str) -> str:
        return name_pattern(PLACEHOLDER).sub(compiled_name(self.key), normalized_text)


@dataclass(frozen=True)
class Plan:
    """A program's executables, the entries standing in for them, and the entries to compile first."""
    executables: list[ProgramExecutable]
    entries: dict[str, Entry]                 # executable name -> entry
    misses: list[tuple[Entry, str]]           # entry -> the source to compile
    damaged: list[str] = ()                   # entries not taken: files changed since stored

    @property
    def hits(self) -> int:
        return len(set(e.key for e in self.entries.values())) - len(self.misses)


def plan(executables: list[ProgramExecutable], target: str, folder: Path,
         compiler_version: str, flags: list[str], substituted=(),
         shared: Path | None = None, remote: RemoteCache | None = None) -> Plan:
    """Key every executable but those in ``substituted`` and those not cacheable.

    An entry is looked up in ``folder``, then in ``shared`` (a cache this build
    only reads); where neither has it, it is fetched from ``remote`` into
    ``folder``, checked then as any other; misses are compiled into ``folder``
    (and uploaded to ``remote``).
    """
    store = Store(remote=remote, namespace=f"codegen {target}")
    entries, misses, damaged = {}, {}, []
    for executable in executables:
        if executable.name in substituted or not_cacheable(executable):
            continue
        source = normalized(executable)
        key = entry_key(source, compiler_version, flags)
        entry = _found(key, TARGET_BINARIES[target], folder, shared, damaged, store)
        if entry.refused.is_file():
            continue
        entries[executable.name] = entry
        if entry.key not in misses and not entry.exists():
            misses[entry.key] = (entry, entry.source_text(source))
    return Plan(executables, entries, list(misses.values()), damaged)


def _found(key: str, suffix: str, folder: Path, shared: Path | None, damaged: list[str],
           store: Store | None = None) -> Entry:
    """The entry to take for ``key``: whole and unchanged, in ``folder``, else in ``shared``.

    Otherwise the entry in ``folder`` (fetched into it by ``store`` where it
    can), to compile. A damaged entry is reported in ``damaged`` and removed
    where this build may write.
    """
    store = store or Store()
    own = Entry(folder, key, suffix, store)
    looked_up = [own] + ([Entry(shared, key, suffix, Store(read_only=True, trust=store.trust))]
                         if shared else [])
    if not any(e.files.present() or os.path.lexists(e.refused) for e in looked_up):
        store.fetch(own.files, f"codegen cache entry {key}")
    for entry in looked_up:
        if is_regular(entry.refused):
            return entry
        if not entry.files.present():
            continue
        problem = entry.damage()
        if not problem:
            return entry
        action = entry.store.discard(entry.files)
        damaged.append(f"{entry.digests} is not used: {problem}; entry {action}, compiling it again")
    return own


def assemble(program: Program, plan_: Plan) -> None:
    """Replace each planned executable of ``program`` by its stand-in."""
    for executable in plan_.executables:
        entry = plan_.entries.get(executable.name)
        if entry is None or entry.refused.is_file():
            continue
        text, linked = stand_in(entry, executable)
        program.replace(executable.name, text, str(entry.translated),
                        visibility=executable.visibility, linked=linked)


def stand_in(entry: Entry, executable: ProgramExecutable) -> tuple[str, EmbeddedObject | None]:
    """What replaces ``executable``: its cached translation renamed back and, on GPUs, its binary.

    The binary is embedded (``data``) in the variant, so the assembled program is
    the whole input of the module's compile and changes whenever a binary does.
    It is named by key, not path: where the cache is does not change the program.
    """
    contents = entry.contents()
    translated = contents[entry.translated.name].decode("utf-8")
    renamed = name_pattern(compiled_name(entry.key)).sub(executable.name, translated)
    if not entry.binary_suffix:
        return renamed, None
    binary = renamed_binary(contents[entry.binary.name], entry.binary_suffix, translated,
                            entry.key, executable.name, str(entry.binary))
    return renamed, EmbeddedObject(entry.binary.name, binary)


def embedded_binaries(assembled: str) -> dict[str, bytes]:
    """The binary each stand-in of an assembled program embeds, by executable name."""
    found = {}
    with Program(assembled, "<assembled>") as program:
        for executable in program.executables():
            data = _EMBEDDED_RE.search(executable.text)
            if data:
                found[executable.name] = bytes.fromhex(data.group(1))
    return found


def renamed_binary(data: bytes, suffix: str, translated: str, key: str, name: str,
                   path: str = "<binary>") -> bytes:
    """The entry's binary with its kernels named after ``name``'s exports, as IREE names them."""
    compiled = compiled_name(key)
    if suffix == ".ptx":
        if compiled.encode() not in data:
            raise UserError(f"codegen cache entry {path} does not name its kernels "
                            f"'{compiled}...'; delete it to have it compiled again")
        # NVPTX writes symbols with '$' as '_'.
        return data.replace(compiled.encode(), name.replace("$", "_").encode())
    for export in _EXPORT_RE.findall(translated):
        data = spirv.rename_entry_point(data, path, export,
                                        name_pattern(compiled).sub(name, export))
    return data


@dataclass(frozen=True)
class Compiler:
    """iree-compile, the flag files the module is compiled with, flags of its own, what shows its command lines."""
    program: str
    flag_files: tuple[str, ...]
    flags: tuple[str, ...] = ()
    echo: Callable[[str], None] | None = None
    timeouts: toolchains.Timeouts | None = None
    # runner(argv, *, reads, writes, output_folders, doing) runs iree-compile as
    # toolchains.run does (a build sends it to a worker); its batches' files are then made
    # in a folder inside ``work_in`` (the project), named relative to the working folder.
    runner: Callable[..., object] | None = None
    work_in: str | None = None

    def run(self, argv: list[str], what: str, *, reads=(), writes=(), output_folders=()) -> None:
        argv = [self.program, *argv, *(f"@{f}" for f in self.flag_files), *self.flags]
        if self.echo:
            self.echo(" ".join(argv))
        if self.runner:
            self.runner(argv, reads=[*reads, *self.flag_files], writes=list(writes),
                        output_folders=list(output_folders), doing=what)
        else:
            toolchains.run(argv, doing=what, timeouts=self.timeouts)


class CodegenFailed(UserError):
    """IREE's codegen failed for some executables; every other entry of their batches was stored."""

    def __init__(self, failures: list[tuple[Entry, str]], log: str) -> None:
        self.failures, self.log = failures, log     # (entry, IREE's first error about it)
        super().__init__(f"IREE's codegen failed for {len(failures)} executable(s)")


def compile_entries(compiler: Compiler, entries: list[tuple[Entry, str]], jobs: int = 1,
                    slots: threading.Semaphore | None = None, cores: int = 1) -> None:
    """Compile every (entry, source) in up to ``jobs`` batches, each one or two iree-compile runs.

    A batch runs while it holds one of ``slots`` (shared by all callers at
    once, so that several modules compiling misses keep to ``-j``). Where the
    batches fill the ``cores``, each runs single-threaded (IREE's threads would
    only contend); fewer batches than cores keep IREE's threads. Files appear
    whole (written aside, then renamed), so builds sharing the folder see an
    entry complete or not at all; two builds compiling the same entry write
    the same bytes. Executables IREE fails to translate are left out of their
    batch, which is compiled again without them, then reported together
    (``CodegenFailed``).
    """
    if not entries:
        return
    count = min(max(1, jobs), len(entries))
    slots = slots or threading.BoundedSemaphore(count)
    threads = () if count < cores else THREADING_OFF

    def run(batch):
        with slots:
            return _compile_batch(compiler, batch, threads)

    failures, logs = [], []
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        for done in [pool.submit(run, entries[i::count]) for i in range(count)]:
            failed, log = done.result()
            failures += failed
            logs += [log] if log else []
    if failures:
        raise CodegenFailed(failures, "\n".join(logs))


_ERROR_AT_RE = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):\d+: error: (?P<message>.*)$", re.M)


def _compile_batch(compiler: Compiler, batch: list[tuple[Entry, str]],
                   threads: tuple[str, ...] = ()) -> tuple[list[tuple[Entry, str]], str]:
    """Compile ``batch``; the entries IREE failed to translate, with their errors, and its log."""
    failures, log = [], ""
    with (scratch_folder(compiler.work_in, "codegen") if compiler.work_in else
          tempfile.TemporaryDirectory(prefix="iree-codegen-cache-")) as work:
        work = Path(os.path.relpath(work) if compiler.work_in else work)
        sources, translated = work / "sources.mlir", work / "translated.mlir"
        while batch:
            sources.write_text("\n".join(source for _, source in batch) + "\n",
                               encoding="utf-8")
            try:
                compiler.run([str(sources), "--compile-from=executable-sources",
                              "--compile-to=executable-targets", *threads,
                              "-o", str(translated)],
                             "translate executables for the codegen cache",
                             reads=[sources], writes=[translated])
                break
            except UserError as e:
                failed = _failed_entries(str(e), str(sources), batch)
                if not failed:
                    raise
                failures += failed
                log += str(e).replace(str(sources), "<batch>") + "\n"
                batch = [(entry, source) for entry, source in batch
                         if entry not in {f for f, _ in failed}]
        if not batch:
            return failures, log
        binaries = []
        if batch[0][0].binary_suffix:
            serialized = work / "serialized.vmfb"       # the executables alone: no weights
            compiler.run([str(translated), "--compile-from=executable-targets",
                          "--iree-hal-link-executables=false", *threads,
                          f"--iree-hal-dump-executable-binaries-to={work / 'binaries'}",
                          "-o", str(serialized)], "serialize executables for the codegen cache",
                         reads=[translated], writes=[serialized],
                         output_folders=[work / "binaries"])
            binaries = sorted((work / "binaries").iterdir())
        with Program(translated.read_text(encoding="utf-8"), str(translated)) as program:
            for entry, source in batch:
                _store(entry, source, program, binaries)
    return failures, log


def _failed_entries(output: str, sources: str, batch: list[tuple[Entry, str]]) -> list[tuple[Entry, str]]:
    """The entries of ``batch`` whose lines of the batch file ``output``'s errors point at."""
    starts, line = [], 1
    for entry, source in batch:
        starts.append((line, entry))
        line += source.count("\n") + 1
    failed = {}
    for error in _ERROR_AT_RE.finditer(output):
        if error.group("file") != sources:
            continue
        at = int(error.group("line"))
        entry = next(e for first, e in reversed(starts) if first <= at)
        failed.setdefault(entry, error.group("message").strip())
    return list(failed.items())


def _store(entry: Entry, source: str, translated: Program, binaries: list[Path]) -> None:
    name = compiled_name(entry.key)
    entry.store.write_note(entry.source, source.encode("utf-8"))
    if not entry.binary_suffix:
        entry.publish({entry.translated: translated.executable_text(name).encode("utf-8")})
        return
    found = [b for b in binaries if b.name.startswith(f"module_{name}_")
             and b.suffix == entry.binary_suffix]
    if len(found) != 1:
        raise UserError(f"iree-compile wrote {len(found)} {entry.binary_suffix} binaries for "
                        f"codegen cache entry {entry.key}; expected one")
    stripped = translated.without_code(name)
    if entry.binary_suffix == ".spv" and _SUBGROUP_SIZE_RE.search(stripped):
        entry.store.write_note(entry.refused,
                               b"an external Vulkan variant loses the export's subgroup_size\n")
        return
    entry.publish({entry.translated: stripped.encode("utf-8"), entry.binary: found[0]})


def cached_targets(setting: str) -> tuple[str, ...]:
    """The targets EXECUTABLE_CACHE turns the cache on for."""
    value = setting.strip().lower()
    if value in ("", "default"):
        return EXECUTABLE_CACHE_TARGETS
    if value in ("1", "yes", "true", "on", "all"):
        return tuple(TARGET_BINARIES)
    if value in ("0", "no", "false", "off", "none"):
        return ()
    targets = tuple(t.strip() for t in value.split(",") if t.strip())
    for t in targets:
        if t not in TARGET_BINARIES:
            raise UserError(f"EXECUTABLE_CACHE: '{t}' has no codegen cache; it works for "
                            f"{', '.join(TARGET_BINARIES)} (or 1, 0)")
    return targets
