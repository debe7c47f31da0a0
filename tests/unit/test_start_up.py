"""What a build's start costs: the tools import no numpy (about 0.1 s) nor jinja2 (0.02 s) until a
step needs them."""
import subprocess
import sys

from harness import REPO

TOOLS = ("iree_project", "iree_program", "iree_run", "iree_verify", "iree_expected", "iree_bench",
         "iree_hotspots", "iree_dump", "iree_release", "iree_substitutions")


def test_loading_the_tools_imports_neither_numpy_nor_jinja2():
    code = ("import sys; sys.path[:0] = ['site_scons', 'site_scons/site_tools']\n"
            f"for tool in {TOOLS!r}: __import__(tool)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'jinja2'))[:3])")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
