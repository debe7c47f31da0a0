"""README.md and docs/: short README, links that lead somewhere, one SConstruct, known variables."""
from __future__ import annotations

import re

import iree_kernels
from conftest import REPO
from iree_kernels.settings import BY_NAME

README = (REPO / "README.md").read_text()
DOCS = sorted((REPO / "docs").glob("*.md"))
DOCUMENTS = [REPO / "README.md", *DOCS]


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.M | re.S)
    return {slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)}


def test_the_readme_is_short_and_keeps_the_quick_start_commands():
    assert len(README.splitlines()) <= 250
    quick_start = README.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    assert "```sh\n./setup.sh scons\n./setup.sh pytest\n```" in quick_start
    assert "./setup.sh pytest" in (REPO / ".ci/run").read_text()


def test_the_readme_lists_every_target_scons_h_lists():
    declared = {name for tool in (REPO / "site_scons").rglob("*.py")
                for name in re.findall(r'Alias\("([\w.-]+)"', tool.read_text())}
    assert "verify-release" in declared
    for name in declared:
        assert f"`scons {name}" in README, name


def test_every_docs_page_is_linked_from_the_readme():
    for page in DOCS:
        assert f"](docs/{page.name})" in README, page.name


def test_every_relative_link_leads_to_a_file_and_heading():
    for document in DOCUMENTS:
        for target in re.findall(r"\]\(([^)\s]+)\)", document.read_text()):
            if re.match(r"[a-z]+:", target):
                continue                                    # https:, mailto:
            path, _, anchor = target.partition("#")
            linked = (document.parent / path).resolve() if path else document
            assert linked.is_file(), f"{document.name}: {target}"
            if anchor:
                assert anchor in anchors(linked), f"{document.name}: {target}"


def test_there_is_one_two_line_sconstruct_and_the_package_shows_the_same():
    blocks = [b for d in DOCUMENTS
              for b in re.findall(r"^```python\n(.*?)^```", d.read_text(), re.M | re.S)
              if "IreeKernelProject" in b]
    assert len(blocks) == 1 and len(blocks[0].splitlines()) == 2
    for line in blocks[0].splitlines():
        assert line in iree_kernels.tool_path.__doc__


def test_variables_given_to_scons_in_examples_are_command_line_variables():
    given = set()
    for document in DOCUMENTS:
        for block in re.findall(r"^```sh\n(.*?)^```", document.read_text(), re.M | re.S):
            for line in block.splitlines():
                if re.match(r"(\./setup\.sh )?scons\b", line.strip()):
                    given |= set(re.findall(r"\b([A-Z][A-Z0-9_]*)=", line.split("#")[0]))
    assert given and given <= set(BY_NAME), given - set(BY_NAME)
