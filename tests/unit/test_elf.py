"""iree_kernels.binaries.elf: the functions a native object defines, for the kernel check of C kernels."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from iree_kernels.binaries import elf
from iree_kernels.core.errors import UserError

SOURCE = "static int helper(int x) { return x + 1; }\n" \
         "int twice(int x) { return helper(x) * 2; }\nvoid kernel_b(void) {}\n"


@pytest.fixture
def object_file(tmp_path):
    if not shutil.which("clang"):
        pytest.skip("no clang here")
    (tmp_path / "k.c").write_text(SOURCE)
    subprocess.run(["clang", "-target", "x86_64-unknown-unknown-eabi-elf", "-O0", "-c",
                    str(tmp_path / "k.c"), "-o", str(tmp_path / "k.o")], check=True, timeout=60)
    return (tmp_path / "k.o").read_bytes()


def test_an_object_defining_the_function_passes_and_one_without_it_lists_its_functions(object_file):
    elf.check_function(object_file, "k.o", "twice")
    with pytest.raises(UserError, match=r"k\.o: defines no function 'k', .*the functions it "
                                        r"defines: kernel_b, twice; set function = \"NAME\""):
        elf.check_function(object_file, "k.o", "k")
    with pytest.raises(UserError, match="'helper' is static"):
        elf.check_function(object_file, "k.o", "helper")


def test_what_is_no_elf_file_is_said():
    with pytest.raises(UserError, match="k.o: not a native object: not a 64-bit"):
        elf.check_function(b"not elf", "k.o", "k")
    with pytest.raises(UserError, match="truncated"):
        header = bytearray(b"\x7fELF\x02\x01" + b"\0" * 58)
        header[40:48] = (4096).to_bytes(8, "little")       # section headers past the end
        header[58:62] = (64).to_bytes(2, "little") + (3).to_bytes(2, "little")
        elf.read_symbols(bytes(header), "k.o")
