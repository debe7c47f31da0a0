"""SCons tool: import ONNX models to MLIR with IREE's ONNX importer (iree-import-onnx).

Builder:
  IreeImportOnnx   model.onnx -> model.mlir (torch-dialect MLIR that iree-compile reads)

Method:
  env.IreeImportedModel(model, folder)
      for a manifest model (iree_kernels.manifest.Model) whose source is
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
Python traceback; ``VERBOSE=1`` prints all it said. Imports depend on the
versions of ``iree-base-compiler`` and ``onnx``, so upgrading either imports again.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import subprocess
import sys

import SCons.Builder
import SCons.Environment
import SCons.Errors
import SCons.Scanner
import SCons.Util

from iree_kernels import toolchains
from iree_kernels.errors import UserError
from iree_kernels.manifest import DEFAULT_OPSET
from iree_kernels.onnx_importer import external_data, failure_reason, importer_versions
from iree_kernels.scons.escaping import program
from iree_kernels.scons.kernels import version_emitter
from iree_kernels.scons.nodes import named_value
from iree_kernels.scons.spawn import WholeFileCommand

SHORT_COMSTR = "IMPORT   $TARGET"


class _ImportCommand(WholeFileCommand):
    """``$IREE_IMPORT_ONNXCOM`` as a WholeFileCommand whose failure is one line naming the model."""

    def execute(self, target, source, env, executor=None):
        spawn = _CapturingSpawn(float(env.subst("$IREE_IMPORT_ONNXTIMEOUT") or 0) or None,
                                bool(env.get("VERBOSE")))
        # env.Override would drop this call's overrides (the opset, the model) on an
        # OverrideEnvironment; wrapping keeps them.
        with_spawn = SCons.Environment.OverrideEnvironment(env, {"SPAWN": spawn})
        status = super().execute(target, source, with_spawn, executor)
        if isinstance(status, SCons.Errors.BuildError):
            model = env.get("IREE_IMPORT_ONNX_MODEL")
            onnx = executor.get_all_sources()[0] if executor else source[0]
            status.errstr = (f"{model + ': ' if model else ''}cannot import {onnx}: "
                             f"{spawn.reason or status.errstr}")
        return status


class _CapturingSpawn:
    """A SPAWN without a shell that keeps what the importer printed and says why it failed."""

    def __init__(self, timeout: float | None, verbose: bool) -> None:
        self.timeout, self.verbose, self.reason = timeout, verbose, ""

    def __call__(self, sh, escape, cmd, args, env):
        # The program (this Python) may be named by a stand-in word (program()): its
        # path holds '$' in a checkout in such a folder.
        args = [toolchains.real_program(args[0]), *args[1:]]
        try:
            result = subprocess.run(args, env=env, close_fds=True, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True, errors="replace",
                                    timeout=self.timeout)
        except OSError as e:
            self.reason = f"cannot run {args[0]}: {e.strerror}"
            return 127
        except subprocess.TimeoutExpired:
            self.reason = f"the importer took more than {self.timeout:g} s (IREE_IMPORT_ONNXTIMEOUT)"
            return 124
        if result.returncode == 0 or self.verbose:
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
        if result.returncode != 0:
            self.reason = failure_reason(result.stdout) or f"exit status {result.returncode}"
        return result.returncode


def _emit_versions(target, source, env):
    env.Depends(target, named_value(importer_versions(), "ONNX importer versions"))
    return target, source


def scan_external_data(node, env, path) -> list:
    """The external data files an .onnx model's tensors name: the import reads them."""
    if not node.exists():
        return []
    try:
        return [env.fs.File(found) for found in external_data(node.abspath, str(node))]
    except UserError as e:
        raise SCons.Errors.UserError(str(e)) from None


def imported_model(env, model, folder):
    """``model`` reading its import where its source is .onnx; see the module's docstring."""
    if not model.source.endswith(".onnx"):
        return model
    short = {} if env.get("VERBOSE") else {"IREE_IMPORT_ONNXCOMSTR": SHORT_COMSTR}
    origin = model.origin
    where = f"{origin.file}:{origin.line}" if origin.line else origin.file
    imported = env.IreeImportOnnx(
        folder.File(f"{model.name}.mlir"), f"#{model.source}",
        IREE_IMPORT_ONNX_OPSET=model.opset or DEFAULT_OPSET,
        IREE_IMPORT_ONNX_MODEL=f"{where}: {origin.entry}", **short)
    return dataclasses.replace(model, source=imported[0].get_path())


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
        action=_ImportCommand("IREE_IMPORT_ONNXCOM", {"cmdstr": "$IREE_IMPORT_ONNXCOMSTR"}),
        suffix=".mlir", src_suffix=".onnx",
        source_scanner=SCons.Scanner.Scanner(scan_external_data, name="OnnxExternalDataScanner"),
        emitter=[_emit_versions, version_emitter("IREE_IMPORT_ONNXCOM")])
    env.AddMethod(imported_model, "IreeImportedModel")


def exists(env):
    return importlib.util.find_spec("onnx") is not None and \
        importlib.util.find_spec("iree.compiler") is not None
