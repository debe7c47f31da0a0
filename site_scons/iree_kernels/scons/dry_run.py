"""``scons -n`` lists every step a real build would run, not only the first.

SCons decides a step is out of date when a dependency's content changed. In a
dry run nothing is built, so a step's output keeps its old content and every
step after it reads as up to date: after a kernel edit, ``-n`` showed ``CC``
alone while the real build went on to WRAP, SUBST, ASSEMBLE and IREE. Here, in
a dry run, a dependency that this run would build (SCons marks it executed)
counts as changed, so the steps after it are listed too, in the order they
would run. Steps depend only on what they read (a wrapper names its kernel and
reads none of it), so after an edit that changes what each step makes, the list
is what the build runs. Where a step rewrites an output with the same bytes (a
comment edit leaves the object the same), a real build stops early, which a dry
run cannot know: the list is then what may run. Not for: what a real build decides.
"""
from __future__ import annotations

import SCons.Node
import SCons.Script


def list_every_step(env) -> None:
    """In a dry run (``-n``), ``env`` takes a dependency built in this run as changed."""
    if not SCons.Script.GetOption("no_exec"):
        return
    env.decide_target = _after_dry_steps(env.decide_target)
    env.decide_source = _after_dry_steps(env.decide_source)


def _after_dry_steps(decide):
    def decide_after_dry_steps(dependency, target, prev_ni, repo_node=None) -> bool:
        if dependency.get_state() == SCons.Node.executed:
            return True                         # would be built before ``target``: may change
        return decide(dependency, target, prev_ni, repo_node)
    return decide_after_dry_steps
