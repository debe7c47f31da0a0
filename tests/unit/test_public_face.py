"""iree_kernels' public face: what other repos may import is named in ``__all__``, resolves, and
costs nothing until asked for (``import iree_kernels`` loads none of the package's modules)."""
from __future__ import annotations

import subprocess
import sys

import pytest

import iree_kernels
from conftest import REPO


def test_importing_the_package_loads_none_of_its_modules_nor_scons():
    code = ("import sys; sys.path[:0] = ['site_scons']; import iree_kernels\n"
            "print(sorted(m for m in sys.modules if m.startswith(('iree_kernels.', 'SCons'))))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.parametrize("name", iree_kernels.__all__)
def test_every_public_name_resolves(name):
    assert getattr(iree_kernels, name) is not None
    assert name in dir(iree_kernels)


def test_the_public_kinds_are_the_registrys():
    from iree_kernels.kinds import registry
    assert iree_kernels.KERNEL_KINDS is registry.KERNEL_KINDS
    assert iree_kernels.register_kind is registry.register_kind


def test_a_name_not_public_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'manifest'"):
        iree_kernels.manifest      # noqa: B018
