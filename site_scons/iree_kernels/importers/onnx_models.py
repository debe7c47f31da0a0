"""Copies real ONNX networks from the installed ``onnx`` package into models/, for ``source = "models/<name>.onnx"``.

    python -m iree_kernels.importers.onnx_models                      # squeezenet, resnet50, densenet121
    python -m iree_kernels.importers.onnx_models --strip-softmax squeezenet
    python -m iree_kernels.importers.onnx_models --list

(In this repo: ``./setup.sh python models/fetch_onnx_models.py ...``, the same.)

The ``onnx`` package (pinned in requirements.txt) ships small versions of
well-known networks as backend test data,
``onnx/backend/test/data/light/light_<name>.onnx``: the real graphs (every
convolution, pooling, concatenation of the originals), with every weight a
``ConstantOfShape`` splat of 0.02, so they are a few hundred KB at most.
This script copies them to ``models/<name>.onnx`` and names each graph (and
so the function IREE's importer makes, ``@<name>``) after the model.

``--strip-softmax`` removes a final Softmax node, making its input the
graph's output. With splat weights every logit is the same, so a softmax
over 1000 classes makes every output 0.001 whatever the input and whatever a
substituted kernel computes: expected-output checks need the logits. A model
that does not end in a Softmax (densenet121 ends in a Conv) is copied as it is.

Not for: downloading models (everything comes from the installed package),
or converting torch models (see docs/workflows.md: export them to MLIR with
iree-turbine and name the ``.mlir`` as the source).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx

LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"
DEFAULT = ("squeezenet", "resnet50", "densenet121")


def available() -> list[str]:
    return sorted(p.stem.removeprefix("light_") for p in LIGHT.glob("light_*.onnx"))


def strip_softmax(model: onnx.ModelProto) -> bool:
    """Remove a Softmax whose output is the graph's only output; whether there was one."""
    graph = model.graph
    if len(graph.output) != 1:
        return False
    output = graph.output[0]
    last = [n for n in graph.node if output.name in n.output]
    if len(last) != 1 or last[0].op_type != "Softmax":
        return False
    softmax = last[0]
    if any(softmax.input[0] in n.input for n in graph.node if n is not softmax):
        return False            # its input feeds other nodes too: leave the graph alone
    logits = onnx.ValueInfoProto()
    logits.CopyFrom(output)     # a softmax keeps its input's type and shape
    logits.name = softmax.input[0]
    graph.node.remove(softmax)
    graph.output.remove(output)
    graph.output.append(logits)
    return True


def fetch(name: str, out: Path, strip: bool = False) -> Path:
    """Copy light_<name>.onnx to out/<name>.onnx; ``strip``: without its final Softmax."""
    source = LIGHT / f"light_{name}.onnx"
    if not source.is_file():
        raise SystemExit(f"onnx_models: no {source.name} in the installed onnx package "
                         f"({LIGHT}); available: {', '.join(available())}")
    model = onnx.load(source)
    model.graph.name = name
    note = ""
    if strip:
        note = ", final Softmax removed" if strip_softmax(model) else ", no final Softmax to remove"
    onnx.checker.check_model(model)
    target = out / f"{name}.onnx"
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".tmp-{target.name}")
    onnx.save(model, temporary)
    temporary.replace(target)
    print(f"{target}: {target.stat().st_size} bytes, from onnx {onnx.__version__} "
          f"{source.relative_to(LIGHT.parents[3])}{note}")
    return target


def main(argv=None, out: Path = Path("models")) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", default=list(DEFAULT),
                        help=f"models to copy (default: {' '.join(DEFAULT)})")
    parser.add_argument("--out", type=Path, default=out,
                        help="folder to write <name>.onnx into (default: models/)")
    parser.add_argument("--strip-softmax", action="store_true",
                        help="remove a final Softmax node (for expected-output checks)")
    parser.add_argument("--list", action="store_true", help="list the models available")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(available()))
        return 0
    for name in args.names:
        fetch(name, args.out, strip=args.strip_softmax)
    return 0


if __name__ == "__main__":
    sys.exit(main())
