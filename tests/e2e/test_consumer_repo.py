"""Another repo adopts the tools: pip install, python -m iree_kernels init, build, check."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from conftest import REPO, SAXPY_C
from harness import scons
from iree_kernels.core import toolchains

README = (REPO / "README.md").read_text()
# The README's two-line SConstruct, as a user copies it.
SCONSTRUCT = re.search(r"two lines of `SConstruct`:\n\n```python\n(.*?)```", README, re.S).group(1)
MANIFEST = SAXPY_C + """
[models.ew]
source = "models/elementwise.mlir"
targets = ["vulkan", "cuda"]

# Both include the grid header installed with the package: "iree_kernels/grid.*".
[[substitutions]]
model = "ew"
target = "vulkan"
executable = "main_dispatch_0"
file = "kernels/ew.glsl"

[[substitutions]]
model = "ew"
target = "cuda"
executable = "main_dispatch_0"
file = "kernels/ew.cu"
"""


def git(repo, *args) -> str:
    return subprocess.run(["git", "-c", "user.name=test", "-c", "user.email=test@example.com",
                           *args], cwd=repo, check=True, capture_output=True, text=True,
                          timeout=60).stdout


def clean_checkout(destination):
    """What pip reads of this repo (the files git does not ignore, as they are), committed anew."""
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--",
                 "site_scons", "pyproject.toml", "README.md", "LICENSE", ".gitignore").split("\0")
    for name in filter(None, listed):
        if (REPO / name).is_file():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(REPO / name, destination / name)
    git(destination, "init", "-q")
    git(destination, "add", "-A")
    git(destination, "commit", "-q", "-m", "checkout")
    return destination


def test_consumer_repo_builds_and_checks_with_the_installed_package(tmp_path):
    # The README's path form with extras, from a clean checkout: installing writes nothing in it.
    _, extras = re.search(r'pip install "(/path/to/iree-kernels)(\[[\w,]+\])"', README).groups()
    source = clean_checkout(tmp_path / "iree-kernels")
    before = git(source, "status", "--ignored", "--porcelain")
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    f"--target={site}", f"{source}{extras}"], check=True, timeout=300)
    assert git(source, "status", "--ignored", "--porcelain") == before == ""
    # One top-level package (the tools are iree_kernels.site_tools), and the license.
    assert sorted(p.name for p in site.iterdir() if not p.name.endswith(".dist-info")) == \
        ["iree_kernels"]
    assert (next(site.glob("iree_kernels-*.dist-info")) / "licenses/LICENSE").is_file()

    # python -m iree_kernels init starts the repo: it builds (nothing) before anything is added.
    environment = {**os.environ, "PYTHONPATH": str(site)}
    installed = {"PYTHONPATH": str(site)}          # no --site-dir: the tools come from there
    consumer = tmp_path / "consumer"
    subprocess.run([sys.executable, "-m", "iree_kernels", "init", str(consumer)], env=environment,
                   check=True, capture_output=True, timeout=60)
    assert (consumer / "SConstruct").read_text() == SCONSTRUCT
    result = scons(consumer, site_dir=None, env=installed)
    assert result.ok and "Nothing to be done" in result.stdout, result.failure()
    git(consumer, "init", "-q")
    (consumer / "kernels/models.toml").write_text(MANIFEST)
    shutil.copy(REPO / "kernels/cpu/saxpy.c", consumer / "kernels/saxpy.c")
    shutil.copy(REPO / "models/saxpy.mlir", consumer / "models/saxpy.mlir")
    shutil.copy(REPO / "kernels/vulkan/elementwise.glsl", consumer / "kernels/ew.glsl")
    shutil.copy(REPO / "kernels/cuda/elementwise.cu", consumer / "kernels/ew.cu")
    shutil.copy(REPO / "models/elementwise.mlir", consumer / "models/elementwise.mlir")
    (consumer / "models/elementwise.expected.toml").write_text(
        '[[case]]\nfunction = "main"\ninputs = ["1000xf32=2", "1000xf32=3"]\n'
        'outputs = ["1000xf32=8"]\n')
    (consumer / "models/saxpy.expected.toml").write_text(
        '[[case]]\nfunction = "main"\ninputs = ["3000xf32=1", "3000xf32=2"]\n'
        'outputs = ["3000xf32=4"]\n')

    headers = site / "iree_kernels/data/include/iree_kernels"
    assert sorted(p.name for p in headers.iterdir()) == ["grid.cuh", "grid.glsl"]
    result = scons(consumer, "check", "IREE_TARGETS=llvm-cpu,vulkan", site_dir=None, env=installed)
    assert result.ok, result.failure()
    # init's .gitignore keeps what the build wrote out of the first commit.
    assert sorted(git(consumer, "status", "--porcelain", "--untracked-files=all").split()[1::2]) \
        == [".gitignore", "SConstruct", "kernels/ew.cu", "kernels/ew.glsl", "kernels/kernels.toml",
            "kernels/models.toml", "kernels/saxpy.c", "models/elementwise.expected.toml",
            "models/elementwise.mlir", "models/saxpy.expected.toml", "models/saxpy.mlir"]
    assert "1 case(s) of models/saxpy.expected.toml matched on local-sync" in result.stdout
    assert "of models/elementwise.expected.toml matched on vulkan" in result.stdout
    if toolchains.nvcc():
        result = scons(consumer, "build/kernels/ew.ptx", "--tree=prune", site_dir=None,
                       env=installed)
        assert result.ok, result.failure()
        assert f"{headers / 'grid.cuh'}" in result.stdout     # a dependency, found installed
    assert str(site) in subprocess.run(
        [sys.executable, "-c", "import iree_kernels; print(iree_kernels.tool_path())"],
        env=environment, capture_output=True, text=True, cwd=tmp_path).stdout
