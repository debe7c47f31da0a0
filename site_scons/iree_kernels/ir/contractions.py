"""What a GEMM executable computes, read off its MLIR: the facts a kernel family specializes on.

A dispatch IREE forms around a matmul loads its operands whole, contracts them
(``linalg.matmul``, ``linalg.batch_matmul``, their ``_transpose_a``/``_transpose_b``
forms) into a zero-filled accumulator, may apply one elementwise
``linalg.generic`` to the result (a bias, a residual, an activation, a scale, a
transposed store) and stores it whole. ``read_contractions`` gives, per
executable, a ``Contraction`` of that shape (sizes, element types, which
binding and byte offset each operand is at, the epilogue as an expression
tree), or the reason it is not one, in a sentence. A kernel family
(``project.families``) takes the first and declines the second.

The records are ``ir.gemm_facts``'; the epilogue is read by ``ir.epilogues``.
Not for: rendering kernels from the facts (``kinds.gemm_interface``).
"""
from __future__ import annotations

import re

from iree_kernels.ir.dispatch_body import resources_of
from iree_kernels.ir.epilogues import read_epilogue
from iree_kernels.ir.executables import ops_within, read_each
from iree_kernels.ir.gemm_facts import AFFINE_MAP_RE, Contraction, NotAContraction, Operand, \
    bound_operand, loaded_operand, tensor_shape

# The contraction ops read, with (batched, transposed lhs, transposed rhs).
_CONTRACTIONS = {
    "linalg.matmul": (False, False, False),
    "linalg.matmul_transpose_a": (False, True, False),
    "linalg.matmul_transpose_b": (False, False, True),
    "linalg.batch_matmul": (True, False, False),
    "linalg.batch_matmul_transpose_a": (True, True, False),
    "linalg.batch_matmul_transpose_b": (True, False, True),
}
_STORE = "iree_tensor_ext.dispatch.tensor.store"


def read_contractions(text: str, source: str = "<dump>") -> dict[str, Contraction | str]:
    """Per executable of ``text`` (MLIR, untranslated), its Contraction or why it is not one."""
    resources = resources_of(text)

    def facts_or_why(name: str, op) -> Contraction | str:
        try:
            return contraction_of(op, resources)
        except NotAContraction as e:
            return str(e)
    return read_each(text, source, facts_or_why)


def contraction_of(executable, resources: dict[str, str]) -> Contraction:
    """The Contraction of one ``hal.executable`` op; NotAContraction says why it is none.
    ``resources``: the program's resource blobs by name, where folded tensors' data is."""
    from iree.compiler import ir

    functions = ops_within(executable, "func.func")
    if len(functions) != 1:
        raise NotAContraction(f"it holds {len(functions)} functions, not one")
    layouts = ops_within(executable, "hal.executable.export")
    layout = str(layouts[0].attributes["layout"]) if layouts else ""
    body = [op.operation for op in functions[0].regions[0].blocks[0].operations]
    matmuls = [op for op in body if op.name in _CONTRACTIONS or _generic_contraction(op)]
    if not matmuls:
        raise NotAContraction("it holds no linalg matmul op")
    if len(matmuls) > 1:
        raise NotAContraction(f"it holds {len(matmuls)} matmuls, not one")
    matmul = matmuls[0]
    if matmul.name == "linalg.generic":         # IREE's matmul_like: a contraction by maps
        batched, lhs_dims, rhs_dims = _generic_dims(matmul)
        loops = ("b",) * batched + ("m", "n")
    else:
        batched = _CONTRACTIONS[matmul.name][0]
        loops = ("b",) * batched + ("m", "n")
        lhs_dims, rhs_dims = _operand_dims(matmul, loops)
    operands = list(matmul.operands)
    out_shape, accumulator = tensor_shape(operands[2].type)
    if not _zero_filled(operands[2]):
        raise NotAContraction("it accumulates into a tensor it loads, not into zeros")
    lhs = loaded_operand(operands[0], lhs_dims, "LHS")
    rhs = loaded_operand(operands[1], rhs_dims, "RHS")
    batch = out_shape[0] if batched else 1
    m, n = out_shape[-2:]
    k = lhs.shape[lhs_dims.index("k")]
    op = ("batch_matmul" if batched else "matmul") + \
        ("_transpose_a" if lhs_dims[-1] == "m" else "") + \
        ("_transpose_b" if rhs_dims[-1] == "k" else "") + \
        ("_like" if matmul.name == "linalg.generic" else "")
    result = matmul.results[0]
    users = [use.owner for use in result.uses]
    if len(users) != 1:
        raise NotAContraction(f"its matmul's result has {len(users)} users, not one")
    user = users[0]
    inputs, tables, epilogue = (), (), ("acc",)
    if user.name == "linalg.generic":
        inputs, tables, epilogue, stored, out_dims = read_epilogue(user, result, loops, resources)
    elif user.name == _STORE:
        stored, out_dims = result, loops
    else:
        raise NotAContraction(f"its matmul's result goes to {user.name}, not to a store or "
                              "one elementwise linalg.generic")
    out = _stored(stored, out_dims)
    constants = int(re.search(r"constants\s*=\s*(\d+)", layout).group(1)) \
        if "constants" in layout else 0
    return Contraction(op, batch, m, n, k, lhs, rhs, out,
                       accumulator, inputs, tables, epilogue, constants,
                       layout.count("#hal.pipeline.binding<"))


def _generic_contraction(op) -> bool:
    """Whether ``op`` is a linalg.generic that sums products of its two inputs over one loop."""
    from iree.compiler import ir

    if op.name != "linalg.generic" or len(op.operands) != 3:
        return False
    kinds = str(op.attributes["iterator_types"])
    if kinds.count("reduction") != 1 or kinds.count("parallel") not in (2, 3):
        return False
    payload = [o.operation.name for o in op.regions[0].blocks[0].operations]
    return [p for p in payload if p not in ("arith.extf", "arith.extsi")] in \
        (["arith.mulf", "arith.addf", "linalg.yield"],
         ["arith.muli", "arith.addi", "linalg.yield"])


def _generic_dims(generic) -> tuple[bool, tuple[str, ...], tuple[str, ...]]:
    """(batched, the LHS's dims, the RHS's dims) of a generic contraction: its output's dims
    are (b,) m, n in order, the reduced loop is k; the LHS is the input that has m."""
    from iree.compiler import ir

    maps = [AFFINE_MAP_RE.search(str(m)) for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    if len(maps) != 3 or not all(maps):
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    names = [d.strip() for d in maps[0].group(1).split(",")]
    results = [[r.strip() for r in found.group(2).split(",")] for found in maps]
    reduced = [d for d in names if d not in results[2]]
    if len(reduced) != 1 or any(r not in names for dims in results for r in dims):
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    loops = ("b",) * (len(results[2]) == 3) + ("m", "n")
    loop_of = {**dict(zip(results[2], loops)), reduced[0]: "k"}
    dims = [tuple(loop_of[r] for r in results[i]) for i in (0, 1)]
    if "m" in dims[1] and "n" in dims[0]:
        raise NotAContraction("its contraction reads its operands the other way round")
    if any(sorted(d) != sorted(set(d)) or "k" not in d for d in dims) or \
            "m" not in dims[0] or "n" not in dims[1]:
        raise NotAContraction("its contraction has indexing maps the facts do not read")
    return len(loops) == 3, dims[0], dims[1]


def _operand_dims(matmul, loops: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The loops the LHS's and the RHS's dimensions run over, from the op's indexing maps
    (the result's are ``loops``; the one it lacks is ``k``), or the op's name's defaults."""
    from iree.compiler import ir

    batched, transpose_lhs, transpose_rhs = _CONTRACTIONS[matmul.name]
    lead = ("b",) if batched else ()
    if "indexing_maps" not in matmul.attributes:
        return (lead + (("k", "m") if transpose_lhs else ("m", "k")),
                lead + (("n", "k") if transpose_rhs else ("k", "n")))
    maps = [str(m) for m in ir.ArrayAttr(matmul.attributes["indexing_maps"])]
    parsed = [AFFINE_MAP_RE.search(m) for m in maps]
    if len(maps) != 3 or not all(parsed):
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    names = [d.strip() for d in parsed[0].group(1).split(",")]
    results = [[r.strip() for r in p.group(2).split(",")] for p in parsed]
    if sorted(results[2]) != sorted(set(results[2])) or len(results[2]) != len(loops) or \
            len(names) != len(loops) + 1:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    loop_of = dict(zip(results[2], loops))
    loop_of.update({d: "k" for d in names if d not in results[2]})
    try:
        found = tuple(tuple(loop_of[r] for r in dims) for dims in results[:2])
    except KeyError:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}") from None
    if any(sorted(dims) != sorted(set(dims)) for dims in found) or \
            "k" not in found[0] or "k" not in found[1]:
        raise NotAContraction(f"its {matmul.name} has the indexing maps {maps}")
    return found


def _zero_filled(value) -> bool:
    owner = value.owner
    if getattr(owner, "name", "") != "linalg.fill":
        return False
    fill = owner.operands[0].owner
    return getattr(fill, "name", "") == "arith.constant" and \
        str(fill.attributes["value"]).split(":")[0].strip() in ("0.000000e+00", "0", "0.0")


def _stored(value, dims: tuple[str, ...]) -> Operand:
    users = [use.owner for use in value.uses]
    if len(users) != 1 or users[0].name != _STORE:
        raise NotAContraction("its result is not stored once, whole")
    store = users[0]
    return bound_operand(store.operands[1], store, dims, "result")


