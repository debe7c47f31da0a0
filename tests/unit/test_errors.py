"""iree_kernels.core.errors: a user's mistake said on one line, naming where it is."""
from __future__ import annotations

from iree_kernels.core.errors import UserError, control_character, shown


def test_control_characters_are_shown_as_escapes():
    assert shown("a\nb\tc\x1b[31m") == "a\\nb\\tc\\x1b[31m"
    assert shown("ünï code $x") == "ünï code $x"
    assert shown(3) == "3"


def test_the_first_control_character_is_found():
    assert control_character("ok\tthen\n") == "\t"
    assert control_character("plain ünï") is None


def test_a_user_error_names_file_line_entry_and_field():
    error = UserError("must be a string", file="kernels/a.toml", line=4, entry="[models.mlp]",
                      field="source")
    assert str(error) == "kernels/a.toml:4: [models.mlp]: field 'source': must be a string"
    assert error.message == "must be a string" and error.line == 4


def test_what_is_not_known_is_left_out():
    assert str(UserError("bad", file="k.toml")) == "k.toml: bad"
    assert str(UserError("bad", entry="[[case]] #2")) == "[[case]] #2: bad"
    assert str(UserError("bad")) == "bad"


def test_where_it_is_stays_on_one_line():
    error = UserError("bad", file="kernels/new\nline.toml", entry="[models.a\tb]")
    assert str(error) == "kernels/new\\nline.toml: [models.a\\tb]: bad"


def test_a_long_value_is_cut_saying_how_long_it_is():
    # A 240 KB pass pipeline was quoted whole in its error line.
    pipeline = "builtin.module(" + "canonicalize," * 20000 + ")"
    quoted = shown(pipeline)
    assert quoted.startswith("builtin.module(canonicalize,")
    assert quoted.endswith(f"... ({len(pipeline)} characters)") and len(quoted) < 400
