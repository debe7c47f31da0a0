"""A scaffolded kernel for a real-model dispatch, filled in at its TODO only: shared by e2e and GPU tests.

The dispatch is squeezenet's first max pool (3x3, stride 2, 64x111x111 ->
64x55x55), whose output IREE packs 3,154,176 bytes into its buffer. The tests
scaffold it, replace the skeleton's one TODO line with the computation, and
run the differential check; the same kernel without the skeleton's offset
must fail it.
"""
from __future__ import annotations

import importlib.util
from pathlib import Path

from conftest import REPO

EXPORT_SUFFIX = "_conv_64x55x55x3x3_f32"
OFFSET = 3154176
MODEL = """[models.squeezenet]
source = "models/squeezenet.onnx"
targets = [{targets}]
"""
# The computation, in each language's names for the skeleton's bindings.
FILL = {
    "glsl": """    uint c = i / 3025u, row = (i / 55u) % 55u, column = i % 55u;
    float m = -1.0 / 0.0;
    for (uint dy = 0u; dy < 3u; ++dy)
      for (uint dx = 0u; dx < 3u; ++dx)
        m = max(m, binding0.data[c * 12321u + (2u * row + dy) * 111u + 2u * column + dx]);
    binding1.data[BINDING1_START + i] = m;
""",
    "cuda": """    unsigned int c = i / 3025u, row = (i / 55u) % 55u, column = i % 55u;
    float m = -__int_as_float(0x7f800000);
    for (unsigned int dy = 0u; dy < 3u; ++dy)
      for (unsigned int dx = 0u; dx < 3u; ++dx)
        m = fmaxf(m, binding0[c * 12321u + (2u * row + dy) * 111u + 2u * column + dx]);
    binding1[i] = m;
""",
}
# The skeleton's line applying the output's offset, and the same line without it.
APPLIED_OFFSET = {
    "glsl": (f"const uint BINDING1_START = {OFFSET}u / 4u;", "const uint BINDING1_START = 0u;"),
    "cuda": (f"binding1 = (float*)((char*)binding1 + {OFFSET});", ""),
}
TARGETS = {"glsl": "vulkan", "cuda": "cuda"}


def squeezenet_project(project, targets: list[str]) -> None:
    """``project`` with squeezenet (softmax stripped) declared for ``targets``."""
    spec = importlib.util.spec_from_file_location("fetch", REPO / "models/fetch_onnx_models.py")
    fetch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fetch)
    fetch.main(["--out", str(project.root / "models"), "--strip-softmax", "squeezenet"])
    project.write("kernels/net.toml", MODEL.format(targets=", ".join(f'"{t}"' for t in targets)))


def max_pool_name(listing: str) -> str:
    """The max pool's executable name, from a dump's executables.txt."""
    name = None
    for line in listing.splitlines():
        if line and not line.startswith((" ", "#")):
            name = line.strip()
        elif line.strip().startswith("export") and line.strip().endswith(EXPORT_SUFFIX):
            return name
    raise AssertionError(f"no export *{EXPORT_SUFFIX} in the listing:\n{listing}")


def scaffold_and_fill(project, language: str) -> Path:
    """Dump, scaffold the max pool, and replace the skeleton's only TODO line by FILL."""
    target = TARGETS[language]
    project.scons("dump", f"IREE_TARGETS={target}")
    name = max_pool_name(project.read(f"build/{target}/squeezenet/dump/executables.txt"))
    project.scons("scaffold", f"SCAFFOLD=squeezenet/{target}/{name}", f"LANGUAGE={language}",
                  f"IREE_TARGETS={target}")
    kernel, = (project.root / "kernels" / target).glob("squeezenet_*")
    lines = kernel.read_text().splitlines(keepends=True)
    todo = [number for number, line in enumerate(lines) if "TODO" in line]
    assert len(todo) == 1, f"the skeleton has {len(todo)} TODOs:\n{''.join(lines)}"
    lines[todo[0]] = FILL[language]
    kernel.write_text("".join(lines))
    return kernel


def remove_offset(kernel: Path, language: str) -> None:
    applied, without = APPLIED_OFFSET[language]
    text = kernel.read_text()
    assert text.count(applied) == 1, text
    kernel.write_text(text.replace(applied, without))
