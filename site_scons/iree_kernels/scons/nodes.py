"""Value nodes: how a step's data reaches its Python action and its signature.

Not for files: those are SCons's own File nodes.
"""
from __future__ import annotations

import json

import SCons.Node.Python

import iree_kernels

def spec_value(env, data):
    """A Value node passing ``data`` (JSON) to a Python action, which reads it with ``read_spec``.

    The package's fingerprint is part of the node, not of ``data``: a new
    version of this package runs the action again, and no action sees or
    drops it.
    """
    return env.Value(json.dumps({"spec": data, "library": iree_kernels.fingerprint()},
                                sort_keys=True))


def read_spec(node):
    """What ``spec_value`` passed."""
    return json.loads(node.read())["spec"]

class _RecordedByName(SCons.Node.Python.Value):
    """A Value that SCons's records (.sconsign) name by its name, not by its content."""

    def __str__(self) -> str:
        return self.name


def named_value(value, name: str):
    """A Value node for ``value`` (asked for its text only when a signature needs it), named ``name``.

    SCons records a Value dependency by ``str(node)`` and ``--debug=explain``
    turns that string back into a node through ``ValueWithMemo``: a Value
    whose ``str()`` is its content (a tool's version) came back as another
    node, and every rebuild was explained with that dependency removed and
    added. Recorded by name and found again under it, it compares equal.
    """
    key = hash((name, None))
    node = SCons.Node.Python._memo_lookup_map.get(key)
    if node is None:
        node = SCons.Node.Python._memo_lookup_map[key] = _RecordedByName(value, name=name)
    return node
