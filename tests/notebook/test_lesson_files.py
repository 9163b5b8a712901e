"""The lesson notebooks as stored: valid, without outputs, runnable offline, and linked."""

from __future__ import annotations

import re

import nbformat
import pytest

from lesson_support import LESSONS, NOTEBOOKS, PROJECT, lesson_path


@pytest.mark.parametrize("name", LESSONS)
def test_stored_valid_and_without_outputs(name: str) -> None:
    nb = nbformat.read(lesson_path(name), as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code, name
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, f"{name}: stored with outputs: {cell.source[:60]!r}"
    assert nb.metadata["kernelspec"]["name"] == "python3"


@pytest.mark.parametrize("name", LESSONS)
def test_each_lesson_says_it_runs_offline_and_loads_the_extension(name: str) -> None:
    nb = nbformat.read(lesson_path(name), as_version=4)
    intro = nb.cells[0]
    assert intro.cell_type == "markdown"
    assert "runs top to bottom offline" in intro.source
    sources = [c.source for c in nb.cells if c.cell_type == "code"]
    assert any(s.startswith("%load_ext jupyter_toolagent") for s in sources)


@pytest.mark.parametrize("name", LESSONS)
def test_tags_name_one_cell_each(name: str) -> None:
    """The tests find cells by tag; a tag used twice would make them read the wrong cell."""
    nb = nbformat.read(lesson_path(name), as_version=4)
    tags = [t for c in nb.cells for t in c.get("metadata", {}).get("tags", [])]
    assert len(tags) == len(set(tags)), name


@pytest.mark.parametrize("name", LESSONS[1:])
def test_scripted_lessons_never_need_a_model(name: str) -> None:
    """Outside the quickstart, every agent cell plays a script or sends nothing — or, in a
    lesson that starts its own `FakeAnthropicServer` and points ``ANTHROPIC_BASE_URL`` at it,
    talks to that server through the real SDK."""
    nb = nbformat.read(lesson_path(name), as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    own_server = "FakeAnthropicServer(" in code and 'os.environ["ANTHROPIC_BASE_URL"] = server.base_url' in code
    agent_lines = [c.source.splitlines()[0] for c in nb.cells if c.cell_type == "code" and c.source.startswith("%%agent")]
    assert agent_lines
    for line in agent_lines:
        assert "--script" in line or "--dry-run" in line or own_server, line


def test_readme_links_every_lesson_once() -> None:
    readme = (PROJECT / "README.md").read_text()
    section = re.search(r"^## Notebooks\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    assert section, "README has no '## Notebooks' section"
    using = readme.index("## Using it")
    assert using < section.start(), "the Notebooks section comes after 'Using it'"
    for name in LESSONS:
        assert section.group(1).count(f"(notebooks/{name}.ipynb)") == 1, name
    assert {p.stem for p in NOTEBOOKS.glob("*.ipynb")} == set(LESSONS)
