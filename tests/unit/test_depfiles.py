"""Reading compilers' Makefile-style depfiles."""
from __future__ import annotations

import pytest

from iree_kernels.core.depfiles import canonical, dependencies
from iree_kernels.core.errors import UserError


def test_nvcc_style_continued_lines_and_parent_references():
    text = ("build/k.ptx : kernels/k.cu \\\n    /usr/local/cuda/bin/../include/cuda_runtime.h \\\n"
            "    inc/grid.cuh\n")
    assert dependencies(text, "k.d") == ["kernels/k.cu", "/usr/local/cuda/include/cuda_runtime.h",
                                         "inc/grid.cuh"]


def test_escaped_spaces_hashes_and_dollars():
    text = "c.o: c.c sp\\ ace/h2.h odd\\#name.h cost$$.h\n"
    assert dependencies(text, "c.d") == ["c.c", "sp ace/h2.h", "odd#name.h", "cost$.h"]


def test_target_glued_to_colon_repeats_and_phony_rules():
    text = "s.spv:s.glsl inc/g.glsl inc/g.glsl\ninc/g.glsl:\n"
    assert dependencies(text, "s.d") == ["s.glsl", "inc/g.glsl"]


def test_empty_file_has_no_dependencies_and_garbage_is_refused():
    assert dependencies("", "e.d") == []
    with pytest.raises(UserError, match="x.d: not a dependency file"):
        dependencies("just some words\n", "x.d")


def test_canonical_form_names_the_kernel_and_reads_back_the_same():
    text = "build/.tmp-4242-k.ptx : kernels/k.cu \\\n    sp\\ ace/h.h\n"
    written = canonical(text, "k.ptx", "k.d")
    assert written == "k.ptx: \\\n  kernels/k.cu \\\n  sp\\ ace/h.h\n"
    assert dependencies(written, "k.d") == ["kernels/k.cu", "sp ace/h.h"]
