"""SCons tool: import ONNX models to MLIR with IREE's ONNX importer (iree-import-onnx).

Builder:
  IreeImportOnnx   model.onnx -> model.mlir (torch-dialect MLIR that iree-compile reads)

Method:
  env.IreeImportedModel(model, folder)
      for a manifest model (iree_kernels.project.manifest.Model) whose source is
      ``.onnx``: declares its import into ``folder/<model name>.mlir`` and
      returns the model with that file as its source, so every step after
      it (dumps, modules, checks) reads the imported MLIR. Other models are
      returned as they are. Editing the ``.onnx`` (or its opset), or an
      external data file its tensors name (``location``, beside the model;
      found by a scanner reading the model with the ``onnx`` package),
      imports it again; nothing else does. External data outside the
      model's folder is refused, naming the model and the location.

Variables:
  IREE_IMPORT_ONNX          the importer; default: this Python running IREE's
                            importer module (``$IREE_IMPORT_ONNX_PYTHON -m
                            iree.compiler.tools.import_onnx``, what the
                            ``iree-import-onnx`` script runs); needs the
                            ``onnx`` package beside ``iree-base-compiler``
  IREE_IMPORT_ONNX_OPSET    the opset the model is converted to first, where
                            its own is older (the manifest's ``opset``; 17)
  IREE_IMPORT_ONNXFLAGS     more importer flags
  IREE_IMPORT_ONNXCOM       the command line; IREE_IMPORT_ONNXCOMSTR its short form
  IREE_IMPORT_ONNXTIMEOUT   seconds an import may take (default 1800)

The importer runs without a shell and writes beside its target, which is
moved in place once it succeeded (WholeFileCommand). A failed import is one
error line naming the model (``IREE_IMPORT_ONNX_MODEL``: where the manifest
declares it), the ``.onnx`` file and the importer's last message, not its
Python traceback; ``VERBOSE=1`` prints all it said (``iree_kernels.scons.imports``).
Imports depend on the versions of ``iree-base-compiler`` and ``onnx``, so
upgrading either imports again; the release's lock record names them
(``iree-import-onnx``).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import SCons.Builder
import SCons.Errors
import SCons.Scanner
import SCons.Util

from iree_kernels.core.errors import UserError
from iree_kernels.core.files import not_regular
from iree_kernels.project.manifest import DEFAULT_OPSET
from iree_kernels.importers.onnx_importer import external_data, failure_reason, importer_versions
from iree_kernels.scons.build_folder import file_memo
from iree_kernels.scons.escaping import program
from iree_kernels.scons.imports import ImportCommand, manifest_entry, package_versions, register_importer
from iree_kernels.scons.kernels import version_emitter

SHORT_COMSTR = "IMPORT   $TARGET"


def _emit_versions(target, source, env):
    env.Depends(target, package_versions("iree-import-onnx", importer_versions))
    return target, source


def scan_external_data(node, env, path) -> list:
    """The external data files an .onnx model's tensors name: the import reads them. Kept while
    the model stays as it was (a no-op neither imports onnx nor parses the model)."""
    if not node.exists():
        return []

    def named(model: Path) -> list[str]:
        return external_data(model, str(node))

    folder = os.path.dirname(node.abspath) + os.sep

    def beside(value) -> bool:        # what external_data returns: paths in the model's folder
        return isinstance(value, list) and all(
            isinstance(p, str) and p.startswith(folder) and ".." not in p.split(os.sep)
            and "$" not in p and p.isprintable() for p in value)
    try:
        found = file_memo(env).value("onnx-external-data", node.abspath, named, beside)
        if any(not_regular(f) for f in found):      # gone since: named(...) says how
            found = named(Path(node.abspath))
    except UserError as e:
        raise SCons.Errors.UserError(str(e)) from None
    return [env.fs.File(f) for f in found]


def _declare_import(env, model, target):
    short = {} if env.get("VERBOSE") else {"IREE_IMPORT_ONNXCOMSTR": SHORT_COMSTR}
    return env.IreeImportOnnx(target, f"#{model.source}",
                              IREE_IMPORT_ONNX_OPSET=model.opset or DEFAULT_OPSET,
                              IREE_IMPORT_ONNX_MODEL=manifest_entry(model), **short)


def generate(env):
    env.SetDefault(
        IREE_IMPORT_ONNX_PYTHON=program(sys.executable),
        IREE_IMPORT_ONNX="$IREE_IMPORT_ONNX_PYTHON -m iree.compiler.tools.import_onnx",
        IREE_IMPORT_ONNX_OPSET=DEFAULT_OPSET,
        IREE_IMPORT_ONNXFLAGS=SCons.Util.CLVar(""),
        IREE_IMPORT_ONNXCOM="$( $IREE_IMPORT_ONNX $) $SOURCE "
                            "--opset-version=$IREE_IMPORT_ONNX_OPSET $IREE_IMPORT_ONNXFLAGS -o $TARGET",
        IREE_IMPORT_ONNXCOMSTR="",
        IREE_IMPORT_ONNXTIMEOUT=1800,
    )
    env["BUILDERS"]["IreeImportOnnx"] = SCons.Builder.Builder(
        action=ImportCommand("IREE_IMPORT_ONNX", failure_reason),
        suffix=".mlir", src_suffix=".onnx",
        source_scanner=SCons.Scanner.Scanner(scan_external_data, name="OnnxExternalDataScanner"),
        emitter=[_emit_versions, version_emitter("IREE_IMPORT_ONNXCOM")])
    register_importer(env, ".onnx", _declare_import)


def exists(env):
    return importlib.util.find_spec("onnx") is not None and \
        importlib.util.find_spec("iree.compiler") is not None
