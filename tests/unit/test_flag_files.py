"""The flag-file codec: what write puts in a file, read gives back, and iree-compile reads the same."""
from __future__ import annotations

import shlex

import pytest

from iree_kernels.core import flag_files

AWKWARD = [
    "--iree-hal-substitute-executable-source=main$async_dispatch_1=k/a.mlir",
    "--x=a b/c d.mlir",
    '--x=say "hi"',
    "--x=back\\slash",
    "--x=trailing\\",
    '--x=\\"',
    "--x=#not-a-comment",
    "--x=$HOME and ${dollar}",
    "--x=a=b=c",
    "--x=it's",
    "--x=tab\there",
    "--x=ünïcode dir/k.mlir",
    "",
]


def test_plain_flags_stay_bare():
    flag = "--iree-hal-substitute-executable-source=main$async_dispatch_1=k/a.mlir"
    assert flag_files.write([flag]) == flag + "\n"


def test_a_flag_that_is_not_plain_is_quoted():
    assert flag_files.write(["--flag=with space", '--q="x"']) == \
        '"--flag=with space"\n"--q=\\"x\\""\n'


@pytest.mark.parametrize("flag", AWKWARD)
def test_read_gives_back_what_write_wrote(flag):
    assert flag_files.read(flag_files.write([flag])) == [flag]


def test_a_whole_file_round_trips_in_order():
    assert flag_files.read(flag_files.write(AWKWARD)) == AWKWARD
    assert flag_files.read("") == []


@pytest.mark.parametrize("flag", [f for f in AWKWARD if f])
def test_iree_compiles_tokenizer_reads_each_line_as_the_flag(flag):
    # GNU-style tokenizing as LLVM's response files do: shlex in POSIX mode without comments
    # reads double quotes and backslashes the same way for what quote writes.
    lexer = shlex.shlex(flag_files.quote(flag), posix=True)
    lexer.whitespace_split, lexer.commenters, lexer.quotes, lexer.escapedquotes = True, "", '"', '"'
    assert list(lexer) == [flag]


@pytest.mark.parametrize("line", ['"unterminated', 'two words', '"a" "b"', '"bad \\x escape"',
                                  "'single'"])
def test_read_refuses_a_line_write_never_writes(line):
    with pytest.raises(ValueError, match="not a line of a flag file"):
        flag_files.read(line + "\n")


def test_the_crash_message_names_a_substituted_file_whose_path_is_quoted(tmp_path):
    from iree_kernels.core import toolchains
    flags = tmp_path / "substitutions.flags"
    flags.write_text(flag_files.write(
        ["--iree-hal-substitute-executable-source=main_dispatch_0=kernels/my dir/k \"1\".mlir"]))
    message = toolchains.crash_message("iree-compile", 11, ["iree-compile", f"@{flags}"])
    assert 'main_dispatch_0 (kernels/my dir/k "1".mlir)' in message


def test_the_module_scanner_finds_substituted_files_whose_paths_are_quoted():
    from site_tools import iree_compile
    text = flag_files.write(["--iree-hal-substitute-executable-object=d0=kernels/a b#.spv",
                             "--iree-hal-substitute-executable-source=d1=kernels/$x=1.mlir",
                             "--iree-opt-level=O3"])
    assert iree_compile._substituted_paths(text, ("source", "object")) == \
        ["kernels/a b#.spv", "kernels/$x=1.mlir"]
    assert iree_compile._substituted_paths(text, ("source",)) == ["kernels/$x=1.mlir"]


@pytest.mark.parametrize("stage", ["source", "configuration", "object"])
def test_a_substitution_flag_reads_back_as_what_was_written(stage):
    flag = flag_files.substitution_flag(stage, "main$async_dispatch_3", "k/a=b.spv")
    assert flag == f"--iree-hal-substitute-executable-{stage}=main$async_dispatch_3=k/a=b.spv"
    assert flag_files.parse_substitution_flag(flag) == (stage, "main$async_dispatch_3", "k/a=b.spv")


@pytest.mark.parametrize("flag", [
    "--iree-hal-substitute-executable-sources-from=dir",
    "--iree-hal-substitute-executable-object=name",
    "--iree-hal-substitute-executable-object==k.ptx",
    "--iree-hal-substitute-executable-object=name=",
    "--iree-opt-level=O3",
])
def test_other_flags_are_no_substitution(flag):
    assert flag_files.parse_substitution_flag(flag) is None


def test_an_executable_name_holding_an_equals_sign_has_no_substitution_flag():
    with pytest.raises(ValueError):
        flag_files.substitution_flag("object", "a=b", "k.ptx")
