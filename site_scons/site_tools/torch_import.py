"""SCons tool: import torch programs (``.pt2``) to MLIR with iree-turbine.

Builder:
  IreeImportTorch   model.pt2 -> model.mlir (torch-dialect MLIR that iree-compile reads)

A ``.pt2`` is what ``torch.export.save(torch.export.export(model, args), path)``
writes. ``env.IreeImportedModel`` (``iree_kernels.scons.imports``) declares
the import of a manifest model whose source is ``.pt2`` into
``<folder>/<model name>.mlir``, as the onnx_import tool does for ``.onnx``.

Variables:
  IREE_IMPORT_TORCH         the importer; default: this Python running
                            ``iree_kernels/data/import_torch.py``
                            (``torch.export.load``, then iree-turbine's
                            ``aot.export(...).save_mlir``); needs the torch and
                            iree-turbine packages beside ``iree-base-compiler``
  IREE_IMPORT_TORCHFLAGS    more importer arguments
  IREE_IMPORT_TORCHCOM      the command line; IREE_IMPORT_TORCHCOMSTR its short form
  IREE_IMPORT_TORCHTIMEOUT  seconds an import may take (default 1800)

A failed import is one error line naming the model, the ``.pt2`` and the
importer's last message (torch or iree-turbine missing, a file that is no
``.pt2``). Imports depend on the versions of iree-turbine, torch and
``iree-base-compiler``, so upgrading any imports again; the release's lock
record names them (``iree-import-torch``).
"""
from __future__ import annotations

import importlib.util
import sys

import SCons.Builder
import SCons.Util

from iree_kernels.importers.onnx_importer import failure_reason
from iree_kernels.scons.escaping import file_argument, program
from iree_kernels.scons.imports import ImportCommand, manifest_entry, package_versions, register_importer
from iree_kernels.scons.kernels import version_emitter
from iree_kernels.importers.torch_importer import SCRIPT, importer_versions

SHORT_COMSTR = "IMPORT   $TARGET"


def _emit_versions(target, source, env):
    env.Depends(target, package_versions("iree-import-torch", importer_versions))
    return target, source


def _declare_import(env, model, target):
    short = {} if env.get("VERBOSE") else {"IREE_IMPORT_TORCHCOMSTR": SHORT_COMSTR}
    return env.IreeImportTorch(target, f"#{model.source}",
                               IREE_IMPORT_TORCH_MODEL=manifest_entry(model), **short)


def generate(env):
    env.SetDefault(
        IREE_IMPORT_TORCH_PYTHON=program(sys.executable),
        IREE_IMPORT_TORCH_SCRIPT=file_argument(str(SCRIPT)),
        # -P: the script's folder is not put on sys.path.
        IREE_IMPORT_TORCH="$IREE_IMPORT_TORCH_PYTHON -P $IREE_IMPORT_TORCH_SCRIPT",
        IREE_IMPORT_TORCHFLAGS=SCons.Util.CLVar(""),
        IREE_IMPORT_TORCHCOM="$( $IREE_IMPORT_TORCH $) $SOURCE $IREE_IMPORT_TORCHFLAGS -o $TARGET",
        IREE_IMPORT_TORCHCOMSTR="",
        IREE_IMPORT_TORCHTIMEOUT=1800,
    )
    env["BUILDERS"]["IreeImportTorch"] = SCons.Builder.Builder(
        action=ImportCommand("IREE_IMPORT_TORCH", failure_reason),
        suffix=".mlir", src_suffix=".pt2",
        emitter=[_emit_versions, version_emitter("IREE_IMPORT_TORCHCOM")])
    register_importer(env, ".pt2", _declare_import)


def exists(env):
    return importlib.util.find_spec("torch") is not None and \
        importlib.util.find_spec("iree.turbine") is not None
