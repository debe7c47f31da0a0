"""The per-executable codegen cache: keys that survive renumbering, stand-ins, assembling."""
from __future__ import annotations

import os
import subprocess

import pytest

from conftest import REPO
from iree_kernels.module import codegen_cache
from iree_kernels.binaries import spirv
from iree_kernels.core import toolchains
from iree_kernels.ir.fingerprints import PLACEHOLDER, normalized
from iree_kernels.module.codegen_cache import entry_key, not_cacheable
from iree_kernels.core.errors import UserError
from iree_kernels.ir.program import Program, ProgramExecutable
from iree_kernels.ir.targets import TARGETS
from test_program import linking_object

EXPORT = ("    hal.executable.export public @{name}_elementwise_4_f32 ordinal(0) "
          "layout(#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>) "
          "count(%arg0: !hal.device) -> (index, index, index) {{\n"
          "      %c1 = arith.constant 1 : index\n"
          "      hal.return %c1, %c1, %c1 : index, index, index\n"
          "    }} <workgroup_size = [64 : index, 1 : index, 1 : index], subgroup_size = 32>\n")
EXECUTABLE = ("hal.executable private @{name} {{\n"
              "  hal.executable.variant public @cuda_nvptx_fb target(<\"cuda\", \"cuda-nvptx-fb\">) {{\n"
              + EXPORT +
              "    builtin.module {{\n"
              "      func.func @{name}_elementwise_4_f32() {{\n"
              "        %cst = arith.constant {value} : f32\n"
              "        return\n"
              "      }}\n"
              "    }}\n"
              "  }}\n"
              "}}")


def executable(name: str, value: str = "1.0") -> str:
    return EXECUTABLE.format(name=name, value=value)


def program(*executables: str) -> str:
    body = "".join("\n".join("  " + line for line in e.split("\n")) + "\n" for e in executables)
    return ("module attributes {stream.affinity.default = 1 : i32} {\n" + body +
            "  util.func public @main() {\n    util.return\n  }\n}\n")


def split_program(text: str) -> list[ProgramExecutable]:
    with Program(text) as parsed:
        return parsed.executables()


def assemble(text: str, plan) -> str:
    with Program(text) as parsed:
        codegen_cache.assemble(parsed, plan)
        return parsed.text() + "\n"


def plan(text: str, *args, **kwargs):
    return codegen_cache.plan(split_program(text), *args, **kwargs)


def test_normalizing_replaces_the_own_name_only_as_a_whole_symbol():
    text = executable("main_dispatch_1").replace("1.0 : f32", "1.0 : f32 // main_dispatch_10 xmain_dispatch_1")
    source = normalized(ProgramExecutable("main_dispatch_1", "private", text))
    assert source.startswith(f"hal.executable public @{PLACEHOLDER} {{")
    assert f"@{PLACEHOLDER}_elementwise_4_f32" in source
    assert "main_dispatch_10 xmain_dispatch_1" in source


def test_renumbered_executables_share_a_key_changed_ones_do_not():
    def key(name, value="1.0", flags=("--x",), version="3.13"):
        e = split_program(program(executable(name, value)))[0]
        return entry_key(normalized(e), version, list(flags))
    assert key("main_dispatch_3") == key("main_dispatch_5")
    assert key("main_dispatch_3") != key("main_dispatch_3", value="2.0")
    assert key("main_dispatch_3") != key("main_dispatch_3", flags=("--y",))
    assert key("main_dispatch_3") != key("main_dispatch_3", version="3.14")


@pytest.mark.parametrize("edit, reason", [
    (lambda t: t.replace("@main_dispatch_0 {", '@"main-dispatch" {'), "quoting"),
    (lambda t: t.replace("target(<", "objects([#hal.executable.object<{path = \"k.ptx\"}>]) target(<"),
     "external objects"),
    (lambda t: t.replace("1.0 : f32", "dense_resource<blob> : tensor<4xf32>"), "resources"),
])
def test_executables_that_stay_with_the_modules_compile(edit, reason):
    text = edit(executable("main_dispatch_0"))
    name = "main-dispatch" if reason == "quoting" else "main_dispatch_0"
    assert reason in not_cacheable(ProgramExecutable(name, "private", text))


def without_code(text: str, name: str) -> str:
    with Program(text) as translated:
        return translated.without_code(name)


def test_the_code_is_cut_and_the_export_kept_whole():
    stripped = without_code(program(executable("cached_x")), "cached_x")
    assert "builtin.module" not in stripped and "func.func" not in stripped
    assert EXPORT.format(name="cached_x") in stripped + "\n"


def test_a_stand_in_links_its_binary_and_keeps_the_export(tmp_path):
    key = "ab" * 32
    entry = codegen_cache.Entry(tmp_path, key, ".ptx")
    name = codegen_cache.compiled_name(key)
    entry.binary.write_text(f".visible .entry {name}_elementwise_4_f32(\n .param .u64 {name}_elementwise_4_f32_param_0\n")
    entry.translated.write_text(without_code(program(executable(name)), name))
    entry.record_digests()
    target = split_program(program(executable("main$async_dispatch_2")))[0]
    text, linked = codegen_cache.stand_in(entry, target)
    text = linking_object(text, linked)
    assert text.startswith("hal.executable private @main$async_dispatch_2 {\n")
    ptx = (".visible .entry main_async_dispatch_2_elementwise_4_f32(\n"
           " .param .u64 main_async_dispatch_2_elementwise_4_f32_param_0\n").encode()
    assert ('hal.executable.variant public @cuda_nvptx_fb target(<"cuda", "cuda-nvptx-fb">) '
            f'objects([#hal.executable.object<{{path = "{key}.ptx", data = '
            f'dense<"0x{ptx.hex().upper()}"> : vector<{len(ptx)}xi8>}}>]) {{') in text
    assert EXPORT.format(name="main$async_dispatch_2") in text + "\n"


def test_assembling_replaces_planned_executables_only(tmp_path):
    text = program(executable("main_dispatch_0"), executable("main_dispatch_1", "2.0"))
    planned = plan(text, "llvm-cpu", tmp_path, "v", [], substituted={"main_dispatch_1"})
    assert list(planned.entries) == ["main_dispatch_0"] and len(planned.misses) == 1
    entry, source = planned.misses[0]
    name = codegen_cache.compiled_name(entry.key)
    assert f"@{name} {{" in source and f"@{name}_elementwise_4_f32" in source
    entry.translated.write_text(executable(name).replace("private", "public", 1)
                                .replace("1.0 : f32", "3.0 : f32"))
    entry.record_digests()
    assembled = assemble(text, planned)
    assert assembled.count("3.000000e+00 : f32") == 1 and "2.000000e+00 : f32" in assembled
    assert "1.000000e+00 : f32" not in assembled
    assert [e.name for e in split_program(assembled)] == ["main_dispatch_0", "main_dispatch_1"]
    assert plan(text, "llvm-cpu", tmp_path, "v", []).hits == 1


def test_a_read_only_shared_cache_is_looked_up_and_misses_go_to_the_own_folder(tmp_path):
    text = program(executable("main_dispatch_0"), executable("main_dispatch_1", "2.0"))
    shared, own = tmp_path / "shared", tmp_path / "own"
    filled = plan(text, "llvm-cpu", shared, "v", [], substituted={"main_dispatch_1"})
    entry, _ = filled.misses[0]
    shared.mkdir()
    entry.translated.write_text(executable(codegen_cache.compiled_name(entry.key)))
    entry.record_digests()
    planned = plan(text, "llvm-cpu", own, "v", [], shared=shared)
    assert planned.entries["main_dispatch_0"].folder == shared
    assert [e.folder for e, _ in planned.misses] == [own]
    assert planned.hits == 1


@pytest.mark.skipif(not toolchains.iree_compile(), reason="needs iree-compile")
def test_compiled_entries_stand_in_under_any_name(tmp_path):
    """Real iree-compile, Vulkan: each entry's SPIR-V is renamed to the executable it stands in for."""
    flags = tmp_path / "options.flags"
    flags.write_text("\n".join(TARGETS["vulkan"].compile_flags) + "\n")
    argv = [toolchains.iree_compile(), str(REPO / "models/mlp.mlir"), f"@{flags}",
            "--compile-to=executable-sources", "--mlir-print-local-scope", "-o", "-"]
    text = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    planned = plan(text, "vulkan", tmp_path / "cache", "v", [])
    assert len(planned.misses) == 2
    codegen_cache.compile_entries(codegen_cache.Compiler(toolchains.iree_compile(), (str(flags),)),
                                  planned.misses, jobs=2)
    assembled = assemble(text, planned)
    data = codegen_cache.embedded_binaries(assembled)
    assert list(data) == ["main_dispatch_0", "main_dispatch_1"]
    module = spirv.read_spirv(data["main_dispatch_1"], "spv")
    assert module.entry_points == ("main_dispatch_1_reduction_4x16_f32",)
    assert plan(text, "vulkan", tmp_path / "cache", "v", []).misses == []


def test_a_refused_entry_leaves_its_executable_to_the_modules_compile(tmp_path):
    text = program(executable("main_dispatch_0"))
    key = next(iter(plan(text, "vulkan", tmp_path, "v", []).entries.values())).key
    (tmp_path / f"{key}.refused").write_text("an external Vulkan variant loses its subgroup_size\n")
    planned = plan(text, "vulkan", tmp_path, "v", [])
    assert planned.entries == {} and planned.misses == []
    assert assemble(text, planned) == assemble(text, codegen_cache.Plan([], {}, []))


@pytest.mark.parametrize("suffix, refused", [(".spv", True), (".ptx", False)])
def test_only_vulkan_refuses_an_export_with_a_subgroup_size(tmp_path, suffix, refused):
    key = "cd" * 32
    name = codegen_cache.compiled_name(key)
    entry = codegen_cache.Entry(tmp_path, key, suffix)
    binary = tmp_path / f"module_{name}_variant{suffix}"
    binary.write_bytes(b"binary")
    with Program(program(executable(name))) as translated:
        codegen_cache._store(entry, "source", translated, [binary])
    assert entry.refused.is_file() == refused and entry.exists() != refused


def test_taking_an_entry_touches_it(tmp_path):
    text = program(executable("main_dispatch_0"))
    entry, _ = plan(text, "llvm-cpu", tmp_path, "v", []).misses[0]
    entry.translated.write_text(executable(codegen_cache.compiled_name(entry.key)))
    entry.record_digests()
    os.utime(entry.translated, (1_000_000, 1_000_000))
    assemble(text, plan(text, "llvm-cpu", tmp_path, "v", []))
    assert entry.translated.stat().st_mtime > 1_000_000


def test_a_changed_entry_is_compiled_again_and_said(tmp_path):
    text = program(executable("main_dispatch_0"))
    shared, own = tmp_path / "shared", tmp_path / "own"
    for folder in (shared, own):
        entry, _ = plan(text, "llvm-cpu", folder, "v", []).misses[0]
        folder.mkdir()
        entry.translated.write_text(executable(codegen_cache.compiled_name(entry.key)))
        entry.record_digests()
        entry.translated.write_text("hal.executable private @truncated {")
    planned = plan(text, "llvm-cpu", own, "v", [], shared=shared)
    assert [e.folder for e, _ in planned.misses] == [own] and planned.hits == 0
    assert [d.split(" is not used: ")[0] for d in planned.damaged] == \
        [str(own / f"{entry.key}.sha256"), str(shared / f"{entry.key}.sha256")]
    assert "entry removed" in planned.damaged[0] and "kept (read-only cache)" in planned.damaged[1]
    assert not (own / f"{entry.key}.executable.mlir").exists()
    assert (shared / f"{entry.key}.executable.mlir").exists()


def test_a_file_swapped_after_the_entry_was_checked_is_not_taken(tmp_path):
    text = program(executable("main_dispatch_0"))
    entry, _ = plan(text, "llvm-cpu", tmp_path, "v", []).misses[0]
    entry.translated.write_text(executable(codegen_cache.compiled_name(entry.key)))
    entry.record_digests()
    planned = plan(text, "llvm-cpu", tmp_path, "v", [])
    assert planned.hits == 1                                  # checked and found whole, then:
    entry.translated.write_text(executable(codegen_cache.compiled_name(entry.key), "6.0"))
    with pytest.raises(UserError, match="changed while this build read it"):
        assemble(text, planned)


class FailingOn(codegen_cache.Compiler):
    """A stand-in iree-compile: 'translates' by copying, failing at the line holding ``marker``."""

    def __init__(self, marker: str) -> None:
        super().__init__("iree-compile", ())
        object.__setattr__(self, "marker", marker)
        object.__setattr__(self, "runs", [])

    def run(self, argv, what, **files):
        source = argv[0]
        lines = open(source).read().split("\n")
        self.runs.append(len(lines))
        bad = [n for n, line in enumerate(lines, 1) if self.marker in line]
        if bad:
            raise UserError(f"iree-compile failed to {what}:\n{source}:{bad[0]}:7: error: "
                            "'func.func' op failed to distribute\n(the op, printed)")
        open(argv[argv.index("-o") + 1], "w").write("\n".join(lines))


def test_a_batch_keeps_what_iree_compiled_and_names_what_it_could_not(tmp_path):
    text = program(executable("main_dispatch_0"), executable("main_dispatch_1", "7.0"),
                   executable("main_dispatch_2", "2.0"))
    planned = plan(text, "llvm-cpu", tmp_path, "v", [])
    compiler = FailingOn("7.000000e+00")
    with pytest.raises(codegen_cache.CodegenFailed) as failed:
        codegen_cache.compile_entries(compiler, planned.misses, jobs=1)
    bad = planned.entries["main_dispatch_1"]
    assert [(entry.key, message) for entry, message in failed.value.failures] == \
        [(bad.key, "'func.func' op failed to distribute")]
    assert "<batch>:" in failed.value.log and str(tmp_path) not in failed.value.log
    assert len(compiler.runs) == 2                      # once with all three, once without it
    stored = [name for name, entry in planned.entries.items() if entry.exists()]
    assert stored == ["main_dispatch_0", "main_dispatch_2"]
    again = plan(text, "llvm-cpu", tmp_path, "v", [])
    assert [e.key for e, _ in again.misses] == [bad.key]   # a retry compiles only the failure
