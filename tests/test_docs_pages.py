"""The docs made from what they describe are current: docs/configuration.md is what the
config models say, the stage table of docs/architecture.md what the stages declare, and a
stale page is named with its difference."""

from pathlib import Path

import pytest

from gdelt_forecast.pipeline import docs_pages


@pytest.mark.parametrize("name", sorted(docs_pages.PAGES))
def test_the_page_is_what_it_describes_says(name):
    stale = docs_pages.difference(name)
    assert not stale, f"docs/{name} is stale: run `make docs`\n{stale}"


def test_check_names_the_difference_and_a_write_mends_it(tmp_path: Path, capsys):
    for name in docs_pages.PAGES:
        text = (docs_pages.DOCS / name).read_text(encoding="utf-8")
        (tmp_path / name).write_text(text, encoding="utf-8")
    config = tmp_path / "configuration.md"
    config.write_text(config.read_text().replace("`8`", "`9`"), encoding="utf-8")
    stages = tmp_path / "architecture.md"
    stages.write_text(stages.read_text().replace("reasoning (pool `llm_server`)", "reasoning"))
    assert docs_pages.main(["--check"], docs=tmp_path) == 1
    err = capsys.readouterr().err
    assert "run `make docs`" in err and "-| `download.parallelism`" in err
    assert "+| `reasoning` (model server), recorded |" in err
    assert docs_pages.main([], docs=tmp_path) == 0
    assert docs_pages.main(["--check"], docs=tmp_path) == 0


def test_a_page_without_its_markers_is_refused(tmp_path: Path):
    (tmp_path / "architecture.md").write_text("# no table here\n", encoding="utf-8")
    with pytest.raises(ValueError, match="lacks the lines"):
        docs_pages.difference("architecture.md", docs=tmp_path)
