"""Rendering flag files: one flag a line, quoted the way iree-compile's response files read."""
from __future__ import annotations

import shlex

from iree_kernels.render import response_file_arg
from iree_kernels.substitution import options_file


def test_plain_arguments_stay_bare():
    assert response_file_arg("--iree-hal-substitute-executable-source=main$async_dispatch_1=k/a.mlir") \
        == "--iree-hal-substitute-executable-source=main$async_dispatch_1=k/a.mlir"


def test_spaces_quotes_and_backslashes_survive_tokenizing():
    for arg in ['--x=a b/c d.mlir', '--x=say "hi"', '--x=back\\slash', '--x=ünïcode dir/k.mlir']:
        assert shlex.split(response_file_arg(arg)) == [arg]


def test_options_file_has_one_flag_a_line():
    text = options_file(["--iree-hal-target-device=local", "--flag=with space"])
    assert text == '--iree-hal-target-device=local\n"--flag=with space"\n'
