"""What the build knows about importing ONNX models: why an import failed, what made it, what it reads.

The import itself is a build step (``site_scons/site_tools/onnx_import.py``)
running IREE's importer; this module only reads its output, names the
packages whose versions decide what it writes, and lists the external data
files a model's tensors name (``external_data``: the one function that
imports ``onnx``, where it is installed).
"""
from __future__ import annotations

import os
import re

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import not_regular
from iree_kernels.core.toolchains import package_versions

# What a failed import says when the onnx package is missing, and what to do about it.
INSTALL_HINT = ("the importer needs the onnx package beside iree-base-compiler "
                "(pip install onnx==1.23.2; ./setup.sh installs it)")
IMPORTER_PACKAGES = ("iree-base-compiler", "onnx")


def failure_reason(output: str, limit: int = 400) -> str:
    """The message a failed import ends with, on one line.

    For a Python traceback: the exception (the lines after the last indented
    frame line), without its module path (``DecodeError: ...``). Otherwise the
    last line. '' where there was no output.
    """
    lines = [line.rstrip() for line in output.splitlines() if line.strip()]
    if not lines:
        return ""
    start = len(lines) - 1
    if any(line.startswith("Traceback") for line in lines):
        while start > 0 and not lines[start - 1].startswith((" ", "\t")):
            start -= 1
    reason = " ".join(line.strip() for line in lines[start:])
    reason = re.sub(r"^(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_]\w*(?:Error|Exception)\b)", "", reason)
    if "No module named 'onnx'" in reason:
        reason += f"; {INSTALL_HINT}"
    return reason if len(reason) <= limit else reason[:limit - 3] + "..."


def importer_versions() -> str:
    """The installed versions of the packages the default importer is made of."""
    return package_versions(IMPORTER_PACKAGES)


def external_data(model: str | os.PathLike, shown: str = "") -> list[str]:
    """The external data files ``model`` (an .onnx file) names, as paths beside it, sorted.

    Read with the ``onnx`` package, without loading the data: every tensor
    (initializers, sparse ones, attributes, in subgraphs too) stored
    externally names its file by ``location``, relative to the model's
    folder. UserError, naming the model and the location, where one leaves
    that folder (an absolute path, ``..``, a link pointing out) or is not a
    regular file (``shown``: how errors name the model). [] where ``onnx``
    is missing or the file is no ONNX model (the import says why).
    """
    try:
        import onnx
        from google.protobuf.message import DecodeError
    except ImportError:
        return []
    try:
        proto = onnx.load(os.fspath(model), load_external_data=False)
    except (DecodeError, OSError, ValueError, RuntimeError):
        return []
    folder = os.path.dirname(os.path.abspath(model))
    real_folder = os.path.realpath(folder)
    found = set()
    for tensor in _tensors(proto.graph):
        if tensor.data_location != onnx.TensorProto.EXTERNAL:
            continue
        location = next((entry.value for entry in tensor.external_data
                         if entry.key == "location"), "")
        where = f"{shown or os.fspath(model)}: tensor '{tensor.name}' stores its data in '{location}'"
        path = os.path.normpath(os.path.join(folder, location))
        real = os.path.realpath(path)
        if not location or os.path.isabs(location) or \
                os.path.commonpath([real, real_folder]) != real_folder or \
                os.path.commonpath([path, folder]) != folder:
            raise UserError(f"{where}, outside the model's folder: external data must lie "
                            "in the model's folder or below it")
        if "$" in location or any(not c.isprintable() for c in location):
            raise UserError(f"{where}: '$' and control characters are not allowed in it")
        why = not_regular(path)
        if why:
            raise UserError(f"{where}, which is {why}" if why == "not found" else
                            f"{where}, which is {why}, not a regular file")
        found.add(path)
    return sorted(found)


def _tensors(graph):
    """Every TensorProto of ``graph`` and its subgraphs."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                yield attribute.t
            yield from attribute.tensors
            if attribute.HasField("sparse_tensor"):
                yield attribute.sparse_tensor.values
                yield attribute.sparse_tensor.indices
            if attribute.HasField("g"):
                yield from _tensors(attribute.g)
            for subgraph in attribute.graphs:
                yield from _tensors(subgraph)
