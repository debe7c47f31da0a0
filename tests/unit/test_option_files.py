"""Which files iree-compile flags name, and in which phase they are read."""
from __future__ import annotations

from iree_kernels.core import flag_files
from iree_kernels.project.option_files import CODEGEN, FRONT_END, codegen_key, files_named


def test_every_form_of_value():
    flags = ["--iree-opt-level=O3",
             "--iree-codegen-tuning-spec-path=specs/t.mlir",
             "--iree-codegen-transform-dialect-library=specs/lib.mlir@my_sequence",
             "--iree-link-bitcode=a.bc,x86_64=b.bc",
             "--iree-parameter-import=model=weights.irpa",
             "--iree-preprocessing-pdl-spec-filename=p.pdl",
             "--iree-hal-dump-executable-sources-to=dump",        # an output, not a dependency
             "--iree-codegen-tuning-spec-path=specs/t.mlir"]      # once
    assert files_named(flags) == [("specs/t.mlir", CODEGEN), ("specs/lib.mlir", CODEGEN),
                                  ("a.bc", CODEGEN), ("b.bc", CODEGEN),
                                  ("weights.irpa", FRONT_END), ("p.pdl", FRONT_END)]


def test_codegen_key_follows_content_not_only_the_path(tmp_path):
    (tmp_path / "t.mlir").write_text("one")
    lines = ["--iree-codegen-tuning-spec-path=t.mlir", "--iree-parameter-import=w.irpa"]
    first = codegen_key(lines, str(tmp_path))
    (tmp_path / "t.mlir").write_text("two")
    assert len(first) == 1 and first[0].startswith("t.mlir sha256:")
    assert codegen_key(lines, str(tmp_path)) != first


def test_codegen_key_reads_a_quoted_path_as_the_flag_file_wrote_it(tmp_path):
    spec = tmp_path / 'specs dir' / 'say "#1".mlir'
    spec.parent.mkdir()
    spec.write_text("one")
    text = flag_files.write(['--iree-codegen-tuning-spec-path=specs dir/say "#1".mlir'])
    assert codegen_key(text.splitlines(), str(tmp_path))[0].startswith('specs dir/say "#1".mlir sha256:')
