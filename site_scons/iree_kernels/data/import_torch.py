"""Imports a torch.export program to MLIR for iree-compile:  python import_torch.py MODEL.pt2 -o OUT.mlir

What the build's torch importer runs (site_scons/site_tools/torch_import.py):
``torch.export.load`` reads the ``.pt2`` that ``torch.export.save`` wrote, it is
decomposed with iree-turbine's table (in-place ops, batch norm), and
iree-turbine's ``aot.export(...).save_mlir`` writes it, weights included (a
``dense_resource`` section); the function is ``@main``. Each failure ends
with one line saying what went wrong, which the build reports.

A ``.pt2`` is data: torch.export.load unpickles weights, constants and sample
inputs where the archive asks for it, and a pickle can run any code. Here every
unpickling builds tensors only (``torch.load(weights_only=True)``), and the
archive's other pickles (opaque and TorchScript objects) are refused.
"""
import contextlib
import pickle
import sys
import warnings

INSTALL = ("the .pt2 importer needs torch and iree-turbine beside iree-base-compiler "
           "(pip install torch==2.13.0 iree-turbine==3.9.0, or iree-kernels[torch]; "
           "./setup.sh installs them)")


REFUSED = "refused: the .pt2 holds a pickle that is not plain tensor data (a pickle can run code)"


class RefusedPickle(Exception):
    pass


@contextlib.contextmanager
def tensors_only(torch):
    """While it lasts, torch.load builds tensors only and no other unpickler runs."""
    def refuse(*args, **kwargs):
        raise RefusedPickle("an object that is not a tensor")

    load = torch.load

    def load_tensors(f, *args, weights_only=None, **kwargs):
        return load(f, *args, weights_only=True, **kwargs)

    saved = (torch.load, torch._C._pickle_load_obj, pickle.loads, pickle.load)
    torch.load, torch._C._pickle_load_obj, pickle.loads, pickle.load = (
        load_tensors, refuse, refuse, refuse)
    try:
        yield
    finally:
        torch.load, torch._C._pickle_load_obj, pickle.loads, pickle.load = saved


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] != "-o":
        print("usage: import_torch.py MODEL.pt2 -o OUT.mlir")
        return 2
    source, out = argv[0], argv[2]
    try:
        import torch
        from iree.turbine import aot
        from iree.turbine.aot.decompositions import current_aot_decompositions
    except ImportError as e:
        print(f"{e}; {INSTALL}")
        return 1
    try:
        with tensors_only(torch):
            program = torch.export.load(source)
    except RefusedPickle as e:
        print(f"{REFUSED}: {e}")
        return 1
    except Exception as e:          # a zip of something else, a pickle, a truncated file
        message = _one_line(e)
        if isinstance(e, pickle.UnpicklingError) and "weights_only" in message:
            why = " ".join(str(e).split()).partition("WeightsUnpickler error: ")[2]
            why = why.partition(" was not")[0].partition(" Check the documentation")[0][:200]
            print(f"{REFUSED}: {why or 'not a tensor'}")
        else:
            print(f"not a .pt2 program that torch.export.save wrote ({type(e).__name__}: {message})")
        return 1
    # aot.export decomposes an nn.Module's program, not a loaded one: in-place ops (relu_),
    # batch norm's training form and the like reach iree-compile only decomposed.
    try:
        with warnings.catch_warnings():     # torch's own deprecations (pytree's LeafSpec)
            warnings.simplefilter("ignore", FutureWarning)
            program = program.run_decompositions(current_aot_decompositions())
        exported = aot.export(program)
    except Exception as e:          # what iree-turbine cannot import yet (a None output, ...)
        print(f"iree-turbine {_version()} cannot import the program "
              f"({type(e).__name__}: {_one_line(e)})")
        return 1
    exported.save_mlir(out)
    return 0


def _version() -> str:
    from importlib.metadata import version
    return version("iree-turbine")


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())[:300]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
