"""iree_kernels.module.substitution without IREE: flags, records, selectors' landings, kernel-check messages.

Matching against a real dump is tested in test_executables.py.
"""
from __future__ import annotations

import json

import pytest

from iree_kernels.core import flag_files
from iree_kernels.core.errors import UserError
from iree_kernels.ir.executables import Executable, Export, parse_layout
from iree_kernels.project.records import Origin, Substitution
from iree_kernels.module.selection import Landing
from iree_kernels.module.substitution import (UNCHECKED, KernelChecks, Planned, flag_file,
                                       plan_substitutions, record)

LAYOUT = "#hal.pipeline.layout<bindings = [#hal.pipeline.binding<storage_buffer>]>"
ORIGIN = Origin("kernels/demo.toml", 3, "[[substitutions]] #1", {"executable": 6})
FINGERPRINT = "sha256:" + "ab" * 32


def executable(name: str, exports: int = 1) -> Executable:
    export = Export(f"{name}_generic", 0, parse_layout(LAYOUT), None, LAYOUT, 1)
    return Executable(name, "vulkan-spirv", "vulkan-spirv-fb", (export,) * exports)


EXECUTABLES = {n: executable(n) for n in ("main_dispatch_0", "main_dispatch_1")}


def sub(executable: str = "main_dispatch_1", mode: str = "object", file: str = "kernels/k.glsl",
        **fields) -> Substitution:
    return Substitution("mlp", "vulkan", executable, file, mode, ORIGIN, **fields)


def test_each_mode_has_its_flag():
    planned = plan_substitutions([sub(mode="object"), sub("main_dispatch_0", mode="source", file="kernels/k.mlir")],
                   EXECUTABLES, {"main_dispatch_1": {"kernel": "build/kernels/k.spv"}},
                   checks=UNCHECKED)
    assert [p.flag for p in planned] == [
        "--iree-hal-substitute-executable-object=main_dispatch_1=build/kernels/k.spv",
        "--iree-hal-substitute-executable-source=main_dispatch_0=kernels/k.mlir"]
    assert flag_file(planned) == "".join(p.flag + "\n" for p in planned)


def test_a_wrapped_kernel_is_substituted_by_its_wrapper():
    wrapped = sub(mode="wrapped", workgroup_count=("ceildiv(w0, 64)",), workgroup_size=(64,))
    (planned,) = plan_substitutions([wrapped], EXECUTABLES, {"main_dispatch_1": {
        "kernel": "build/kernels/k.spv", "wrapper": "build/vulkan/mlp/main_dispatch_1.wrapper.mlir"}},
        checks=UNCHECKED)
    assert planned.flag == ("--iree-hal-substitute-executable-source=main_dispatch_1="
                            "build/vulkan/mlp/main_dispatch_1.wrapper.mlir")
    data = planned.as_record()
    assert (data["wrapper"], data["workgroup_count"], data["workgroup_size"]) == \
        ("build/vulkan/mlp/main_dispatch_1.wrapper.mlir", ["ceildiv(w0, 64)"], [64])


def test_a_selector_is_matched_where_it_landed():
    selector = sub("", export="*_generic", fingerprint=FINGERPRINT)
    landed = {selector.key: Landing("main_dispatch_0", "main_dispatch_0_generic", FINGERPRINT)}
    (planned,) = plan_substitutions([selector], EXECUTABLES, checks=UNCHECKED, landed=landed)
    assert planned.executable.name == "main_dispatch_0" and planned.fingerprint == FINGERPRINT
    assert planned.path == "kernels/k.glsl"                       # nothing built: the manifest's


def test_an_executable_without_export_cannot_be_replaced():
    with pytest.raises(UserError) as refused:
        plan_substitutions([sub()], {"main_dispatch_1": executable("main_dispatch_1", exports=0)}, checks=UNCHECKED)
    assert str(refused.value) == ("kernels/demo.toml:6: [[substitutions]] #1: field 'executable': "
                                  "executable 'main_dispatch_1' has no export to replace")


def test_a_model_without_executables_says_none():
    with pytest.raises(UserError, match="has no executable 'main_dispatch_1' for target 'vulkan'; "
                                        "its executables: none"):
        plan_substitutions([sub()], {}, checks=UNCHECKED)


def test_the_record_says_what_replaced_what():
    (planned,) = plan_substitutions([sub()], EXECUTABLES, checks=UNCHECKED)
    data = json.loads(record("mlp", "vulkan", "models/mlp.mlir", [planned]))
    assert (data["model"], data["target"], data["source"]) == ("mlp", "vulkan", "models/mlp.mlir")
    (entry,) = data["substitutions"]
    assert entry["executable"] == "main_dispatch_1" and entry["export"] == "main_dispatch_1_generic"
    assert entry["manifest"] == "kernels/demo.toml" and entry["flag"] == planned.flag
    assert entry["layout"] == "1 bindings [0:rw], 0 push constants"
    assert "wrapper" not in entry


def test_an_options_file_holds_one_flag_a_line():
    assert flag_files.write(["--iree-hal-target-device=vulkan", "--iree-opt-level=O2"]) == \
        "--iree-hal-target-device=vulkan\n--iree-opt-level=O2\n"


class FailingChecks(KernelChecks):
    """Checks that fail the way a SPIR-V binding check does."""

    def _check(self, planned: Planned) -> None:
        raise UserError("binding 2 is in descriptor set 1, expected set 0", file=planned.path)


def test_a_failed_kernel_check_names_manifest_kernel_and_source_line(tmp_path):
    source = tmp_path / "k.glsl"
    source.write_text("#version 450\nlayout(set = 1, binding = 2) buffer Out { float o[]; };\n")
    with pytest.raises(UserError) as refused:
        plan_substitutions([sub(file=str(source))], EXECUTABLES, {"main_dispatch_1": {"kernel": "build/k.spv"}},
             checks=FailingChecks())
    assert str(refused.value) == (
        f"kernels/demo.toml:3: [[substitutions]] #1: kernel {source} (compiled to build/k.spv): "
        f"binding 2 is in descriptor set 1, expected set 0 (at {source}:2)")


def test_a_kernel_used_as_it_is_gets_no_source_line():
    with pytest.raises(UserError) as refused:
        plan_substitutions([sub(file="kernels/k.spv")], EXECUTABLES, checks=FailingChecks())
    assert str(refused.value).endswith("kernel kernels/k.spv: binding 2 is in descriptor set 1, "
                                       "expected set 0")
