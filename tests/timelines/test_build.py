"""The timelines stage on the demo month: the demo's pages (demo/sample_pages.py) give two
stories of documents first seen on several days, whose extractive timelines hold several
dates, each event with its source's availability date."""

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.pipeline.runner import run
from gdelt_forecast.timelines.build import TimelinesError
from tests.release.conftest import MONTH, demo_month


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_built):
    """configs/demo.yaml's month (min_similarity 0: the demo's pages are assigned)."""
    base = tmp_path_factory.mktemp("timelines")
    return demo_month(demo_built, base / "data", base / "mirror")


def test_demo_month_has_stories_of_several_documents_and_dates(demo):
    summary = run("timelines", demo, MONTH)
    assert (summary.complex_events, summary.documents_in_events) == (2, 10)
    assert summary.dropped == {"2-not-after-source": 0, "3-one-event-once": 1, "6-grounded": 0}
    out = demo.data_root / "timelines" / MONTH
    events = pq.read_table(out / "complex_events.parquet").to_pylist()
    assert sorted(e["countries"] for e in events) == [["CHN", "USA"], ["RUS", "USA"]]
    assert all(e["n_documents"] == len(e["doc_ids"]) == 5 for e in events)
    atoms = pq.read_table(out / "timelines.parquet").to_pylist()
    assert len(atoms) == summary.atomic_events
    for event in events:
        assert len(set(event["doc_dates"])) >= 3  # first seen on three days or more
        seen = dict(zip(event["doc_ids"], event["doc_dates"], strict=True))
        mine = [a for a in atoms if a["complex_event_id"] == event["complex_event_id"]]
        assert [a["seq"] for a in mine] == list(range(1, len(mine) + 1))
        assert len({a["date"] for a in mine}) >= 2  # enough for the tasks to cut
        assert all(a["source_date"] == seen[a["source_doc_id"]] for a in mine)
    assert {(a["method"], a["prompt_version"], a["model"]) for a in atoms} == {
        ("extractive", "extractive-v2", None)
    }
    before = {p.name: p.read_bytes() for p in out.glob("*.parquet")}
    run("timelines", demo, MONTH)
    assert {p.name: p.read_bytes() for p in out.glob("*.parquet")} == before  # a re-run replaces


def test_a_month_without_documents_is_an_error(demo, capsys):
    with pytest.raises(TimelinesError, match="no kept documents dated in 2025-06"):
        run("timelines", demo, "2025-06")
    args = ["timelines", "--month", "2025-06", "--data-root", str(demo.data_root)]
    assert main(args) == 1
    assert "no kept documents" in capsys.readouterr().err
    assert not (demo.data_root / "timelines" / "2025-06").exists()
