"""Errors as SCons reports them: one line while reading the SConscripts, one per failed action.

Not for the errors' wording (``iree_kernels.core.errors`` and the library write it).
"""
from __future__ import annotations

import functools
import os

import SCons.Errors
import SCons.Script

from iree_kernels.core.errors import UserError

def fail(message: str) -> None:
    """Stop while reading the SConscripts: one error line, exit status 2."""
    print(f"scons: *** {message}")
    SCons.Script.Exit(2)

def reporting_user_errors(action_function):
    """Turn a UserError raised by a Python action into one SCons error line, no traceback."""
    @functools.wraps(action_function)
    def wrapper(target, source, env):
        try:
            return action_function(target, source, env)
        except UserError as e:
            for node in target:
                path = getattr(node, "abspath", None)
                if path and os.path.isfile(path):
                    os.remove(path)
            raise SCons.Errors.BuildError(node=target[0], errstr=str(e), exitstatus=2) from None
    return wrapper
