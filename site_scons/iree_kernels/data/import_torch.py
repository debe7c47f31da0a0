"""Imports a torch.export program to MLIR for iree-compile:  python import_torch.py MODEL.pt2 -o OUT.mlir

What the build's torch importer runs (site_scons/site_tools/torch_import.py):
``torch.export.load`` reads the ``.pt2`` that ``torch.export.save`` wrote, and
iree-turbine's ``aot.export(...).save_mlir`` writes it, weights included (a
``dense_resource`` section); the function is ``@main``. Each failure ends
with one line saying what went wrong, which the build reports.
"""
import sys

INSTALL = ("the .pt2 importer needs torch and iree-turbine beside iree-base-compiler "
           "(pip install torch==2.13.0 iree-turbine==3.9.0, or iree-kernels[torch]; "
           "./setup.sh installs them)")


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] != "-o":
        print("usage: import_torch.py MODEL.pt2 -o OUT.mlir")
        return 2
    source, out = argv[0], argv[2]
    try:
        import torch
        from iree.turbine import aot
    except ImportError as e:
        print(f"{e}; {INSTALL}")
        return 1
    try:
        program = torch.export.load(source)
    except Exception as e:          # a zip of something else, a pickle, a truncated file
        message = " ".join(str(e).split())[:300]
        print(f"not a .pt2 program that torch.export.save wrote ({type(e).__name__}: {message})")
        return 1
    aot.export(program).save_mlir(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
