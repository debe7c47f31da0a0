"""What a build's start costs: the tools import no numpy (about 0.1 s), jinja2 (0.02 s), http.client
with ssl (0.02 s) nor importlib.metadata (0.01 s) until a step needs them."""
import subprocess
import sys

from harness import REPO

TOOLS = ("iree_project", "iree_program", "iree_run", "iree_verify", "iree_expected", "iree_bench",
         "iree_hotspots", "iree_dump", "iree_release", "iree_substitutions", "triton_compile")
UNTIL_NEEDED = ("numpy", "jinja2", "http.client", "ssl", "importlib.metadata")


def test_loading_the_tools_imports_nothing_a_step_imports_when_it_needs_it():
    code = ("import sys; sys.path[:0] = ['site_scons', 'site_scons/site_tools']\n"
            f"for tool in {TOOLS!r}: __import__(tool)\n"
            f"print(sorted(m for m in {UNTIL_NEEDED!r} if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
