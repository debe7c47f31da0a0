"""This repo's copy of ``python -m iree_kernels.importers.onnx_models``: the onnx package's light networks into models/.

    ./setup.sh python models/fetch_onnx_models.py --strip-softmax squeezenet
"""
from __future__ import annotations

import sys
from pathlib import Path

MODELS = Path(__file__).resolve().parent
sys.path.insert(0, str(MODELS.parent / "site_scons"))
from iree_kernels.importers.onnx_models import (DEFAULT, LIGHT, available, fetch, main,  # noqa: E402,F401
                                      strip_softmax)

if __name__ == "__main__":
    sys.exit(main(out=MODELS))
