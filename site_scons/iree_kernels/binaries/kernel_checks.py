"""The checks of compiled kernels, one function per kind (``registry.KernelKind.check``).

A check is ``check(planned, settings, checker, timeouts)``: the substitution
matched to its executable (``substitution.Planned``; ``planned.path`` is the
kernel the build made or was given), the values of the variables its kind
names (``KernelKind.check_settings``, defaults filled in), the path of its
kind's checker program ('' where there is none: ``missing`` says so where the
check needs it) and the time limits. It
raises a UserError naming the kernel file on the first way the kernel cannot
replace the executable. Not for running the checks: ``substitution.KernelChecks``
picks the kind's check.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Mapping

from iree_kernels.binaries import code_object, elf, ptx_text, spirv
from iree_kernels.core import toolchains
from iree_kernels.core.errors import UserError


def check_ptx(planned, settings: Mapping[str, str], ptxas: str,
              timeouts: toolchains.Timeouts | None) -> None:
    """Entry points and parameters match the export; the PTX ISA version is one the driver
    loads (PTX_ISA_VERSION); ptxas takes it for the module's architecture (CUDA_ARCH)."""
    module = ptx_text.read_ptx(Path(planned.path).read_text(encoding="utf-8", errors="replace"),
                               planned.path)
    major, minor = (int(n) for n in settings["PTX_ISA_VERSION"].split("."))
    ptx_text.check_ptx(module, planned.path, planned.executable, max_version=(major, minor))
    # CUDA_ARCH: the module's, or the one its kind compiled it for (KernelKind.check_overrides).
    ptx_text.run_ptxas(ptxas or missing("ptxas"), planned.path, settings["CUDA_ARCH"], timeouts)


def check_hsaco(planned, settings: Mapping[str, str], checker: str,
                timeouts: toolchains.Timeouts | None) -> None:
    """A code object for the module's architecture (HIP_ARCH) defining the export's kernel."""
    code = code_object.read_hsaco(Path(planned.path).read_bytes(), planned.path)
    code_object.check_hsaco(code, planned.path, planned.executable, settings["HIP_ARCH"])


def check_object(planned, settings: Mapping[str, str], checker: str,
                 timeouts: toolchains.Timeouts | None) -> None:
    """A native object (llvm-cpu): it defines the function the wrapper imports."""
    function = planned.substitution.function or PurePosixPath(planned.substitution.file).stem
    elf.check_function(Path(planned.path).read_bytes(), planned.path, function)


def check_spirv(planned, settings: Mapping[str, str], spirv_val: str,
                timeouts: toolchains.Timeouts | None) -> None:
    """spirv-val takes it (for GLSL_TARGET_ENV); bindings, push constants and, wrapped, the
    local size fit the executable."""
    module = spirv.read_spirv(Path(planned.path).read_bytes(), planned.path)
    spirv.run_spirv_val(spirv_val or missing("spirv-val"), planned.path, settings["GLSL_TARGET_ENV"], timeouts)
    spirv.check_spirv(module, planned.path, planned.executable)
    wanted = tuple(planned.substitution.workgroup_size)
    if not planned.wrapper or not wanted:
        return
    wanted = wanted + (1,) * (3 - len(wanted))
    if module.local_size != wanted:
        raise UserError(f"SPIR-V does not fit executable '{planned.executable.name}': the "
                        f"shader's local_size is {list(module.local_size or ())}, the "
                        f"manifest's workgroup_size is {list(wanted)}; make them equal",
                        file=planned.path)


def missing(program: str) -> str:
    """Raise: the check cannot run without ``program``."""
    raise UserError(f"cannot check it: {toolchains.missing_message(program)}")
