"""Differential-check harnesses: IREE's benchmark module rewritten to dispatch once on a given buffer.

IREE's benchmark dump (``--iree-hal-dump-executable-benchmarks-to``) writes,
per executable and workload, a module that packs the dispatch's bindings into
one buffer and dispatches it in a loop. :func:`harness` turns each such
benchmark function into one that dispatches once on a buffer it is given and
returns it, so ``iree-run-module`` can feed it seeded values and write back
what the executable left there. IREE's dump keeps one dispatch site per
workload (the last); an executable the program dispatches at several sites
(its binding offsets passed as push constants) gets one function per site,
with that site's push constants and binding lengths, read from the program
(``Program.dispatch_sites``).

Not for: filling and comparing the buffers (``dispatch_buffers``), the plan of
a check and running it (``verification``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from iree_kernels.core.errors import UserError

_INPUT = "%iree_kernels_verify_input"
_FUNCTION_RE = re.compile(
    r"^  util\.func public @(?P<name>\S+)\((?P<count>%[\w.$-]+): i32\)(?P<attrs>[^\n]*)\{\n"
    r"(?P<body>.*?)^  \}$", re.M | re.S)
_CONSTANT_RE = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (\d+) : index$", re.M)
_BINDING_RE = re.compile(r"\(%[\w.$-]+ : !hal\.buffer\)\[(%[\w.$-]+), (%[\w.$-]+)\]")
_DISPATCH_RE = re.compile(r"^(?P<indent>[ \t]*)hal\.command_buffer\.dispatch<.*?"
                          r"bindings\(\[.*?\]\)", re.M | re.S)
_I32_RE = re.compile(r"^\s*(%[\w.$-]+) = arith\.constant (-?\d+) : i32$", re.M)
_PACKING = 256          # IREE's benchmarks place each binding at this alignment


@dataclass
class Case:
    """One dispatch of one executable: a function of the harness module."""
    function: str
    bindings: list[tuple[int, int]]       # per binding: (offset, length) in the one buffer
    constants: tuple = ()                 # the push constants' values (None: not known)
    site: str = ""                        # which dispatch site of the program, for messages
    elements: tuple = ()                  # per binding, the element type of all its tensors, or ""

    @property
    def size(self) -> int:
        return max((offset + length for offset, length in self.bindings), default=0)


_WORKLOAD_RE = re.compile(r"_(\d+(?:x\d+)*)$")


def workload_of(function: str) -> tuple[int, ...] | None:
    """The workload a dumped benchmark function dispatches with: IREE names it
    ``<executable>_<variant>_<export>_<w0>x<w1>...`` (a site's own copy adds ``_site<N>``);
    None where the name does not say."""
    found = _WORKLOAD_RE.search(re.sub(r"_site\d+$", "", function.strip('"')))
    return tuple(int(w) for w in found.group(1).split("x")) if found else None


def harness(benchmark: str, origin: str, sites: dict | None = None) -> tuple[str, list[Case]]:
    """The benchmark module ``benchmark`` (its text) rewritten to dispatch once on a given buffer.

    ``sites``: per benchmark function, the program's dispatch sites it stands
    for (``program.DispatchSite``); where given, the function becomes one per
    site, each with that site's push constants and binding lengths.
    """
    cases, pieces, last = [], [], 0
    for found in _FUNCTION_RE.finditer(benchmark):
        name, body = found.group("name"), found.group("body")
        loads = re.findall(r"^(\s*)(%[\w.$-]+) = util\.global\.load @\S+ : !hal\.buffer$",
                           body, re.M)
        counts = re.findall(rf"^\s*(%[\w.$-]+) = arith\.index_cast {re.escape(found.group('count'))}"
                            r" : i32 to index$", body, re.M)
        dispatches = list(_DISPATCH_RE.finditer(body))
        if len(loads) != 1 or len(counts) != 1 or body.count("util.return\n") != 1 or \
                len(dispatches) != 1:
            raise UserError(f"IREE's benchmark of '{name}' is not in the form "
                            "this check reads (one buffer, one loop, one dispatch, one return); "
                            "was it written by another IREE version?", file=origin)
        constants = {n: int(value) for n, value in _CONSTANT_RE.findall(body)}
        try:
            bindings = [(constants[o], constants[n])
                        for o, n in _BINDING_RE.findall(dispatches[0].group(0))]
        except KeyError:
            raise UserError(f"IREE's benchmark of '{name}' binds ranges that are "
                            "not constants", file=origin) from None
        words = {n: int(value) for n, value in _I32_RE.findall(body)}
        pushed = re.search(r"constants\(\[([^\]]*)\]\)", dispatches[0].group(0))
        own = tuple(words.get(n.strip()) for n in pushed.group(1).split(",")) if pushed else ()
        (indent, buffer), = loads
        body = re.sub(r"^\s*%[\w.$-]+ = util\.global\.load @\S+ : !hal\.buffer$",
                      lambda _: f"{indent}{buffer} = hal.buffer_view.buffer<{_INPUT} : "
                                "!hal.buffer_view> : !hal.buffer", body, count=1, flags=re.M)
        body = re.sub(r"^(\s*)(%[\w.$-]+) = arith\.index_cast \S+ : i32 to index$",
                      lambda m: f"{m.group(1)}{m.group(2)} = arith.constant 1 : index",
                      body, count=1, flags=re.M)
        body = body.replace("util.return\n", f"util.return {_INPUT} : !hal.buffer_view\n")
        pieces.append(benchmark[last:found.start()])
        per_site = _distinct((sites or {}).get(name, []))
        if len(per_site) < 2:
            cases.append(Case(name, bindings, own))
            pieces.append(_function(name, found.group("attrs"), body))
        for number, (site, count) in enumerate(per_site if len(per_site) > 1 else ()):
            function = _renamed(name, f"_site{site.number}")
            placed = _packed(site.lengths)
            cases.append(Case(function, placed, site.constants, site.describe(count)))
            pieces.append("\n" * bool(number) + _function(
                function, found.group("attrs"), _at_site(body, site, placed)))
        last = found.end()
    if not cases:
        raise UserError("IREE's benchmark module has no benchmark function", file=origin)
    return "".join(pieces) + benchmark[last:], cases


def _function(name: str, attrs: str, body: str) -> str:
    return (f"  util.func public @{name}({_INPUT}: !hal.buffer_view) -> "
            f"!hal.buffer_view{attrs}{{\n{body}  }}")


def _renamed(name: str, suffix: str) -> str:
    return f"{name[:-1]}{suffix}\"" if name.endswith('"') else f"{name}{suffix}"


def _distinct(sites: list) -> list:
    """(site, how many sites there are) for each static site passing different values."""
    seen, out = set(), []
    for site in sites:
        if site.static and (site.constants, site.lengths) not in seen:
            seen.add((site.constants, site.lengths))
            out.append(site)
    return [(site, len(sites)) for site in out]


def _packed(lengths) -> list[tuple[int, int]]:
    """Bindings of these lengths placed one after another, as IREE's benchmarks place them."""
    placed, offset = [], 0
    for length in lengths:
        placed.append((offset, length))
        offset = -(-(offset + length) // _PACKING) * _PACKING
    return placed


def _at_site(body: str, site, placed: list[tuple[int, int]]) -> str:
    """``body`` dispatching with ``site``'s push constants and the bindings ``placed``."""
    dispatch = _DISPATCH_RE.search(body)
    indent = dispatch.group("indent")
    values = [f"{indent}%iree_kernels_site_c{i} = arith.constant {text}\n"
              for i, text in enumerate(site.constant_texts)]
    values += [f"{indent}%iree_kernels_site_b{i}_{part} = arith.constant {n} : index\n"
               for i, binding in enumerate(placed) for part, n in zip(("at", "length"), binding)]
    numbered = iter(range(len(placed)))

    def rebind(m):
        i = next(numbered)
        return f"{m.group(1)}[%iree_kernels_site_b{i}_at, %iree_kernels_site_b{i}_length]"
    text = re.sub(r"(\(%[\w.$-]+ : !hal\.buffer\))\[%[\w.$-]+, %[\w.$-]+\]", rebind,
                  dispatch.group(0))
    pushed = ", ".join(f"%iree_kernels_site_c{i}" for i in range(len(site.constant_texts)))
    text = re.sub(r"constants\(\[[^\]]*\]\)", lambda _: f"constants([{pushed}])", text)
    return body[:dispatch.start()] + "".join(values) + text + body[dispatch.end():]


def sites_by_function(benchmark: str, sites: list) -> dict[str, list]:
    """The dispatch sites each benchmark function of ``benchmark`` stands for: IREE names
    them ``<executable>_<variant>_<export>[_<workload>]``, one per workload."""
    by_function = {}
    for found in _FUNCTION_RE.finditer(benchmark):
        name = found.group("name").strip('"')
        by_function[found.group("name")] = [
            s for s in sites if name.endswith(s.export + "".join(
                f"{'_' if i == 0 else 'x'}{w}" for i, w in enumerate(s.workload)))]
    return by_function
