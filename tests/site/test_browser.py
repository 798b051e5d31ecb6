"""The site in a real browser: Debian's Chromium, headless, driven by Playwright by its path
(nothing downloads a browser). Every page kind of the demo's site opens over a local server
and from file:// without a console error or a failed request; a leaderboard sorts by mouse and
keyboard; the queries filter; a record opens with its timeline and sources; an agent trace
opens from the leaderboard; and on the planted site no planted script, handler or link runs.

Screenshots of each page kind go to test-artifacts/site/ (not in git). Chromium reaches only
127.0.0.1: every other host name resolves to nothing.
"""

from __future__ import annotations

import json
import os
from contextlib import ExitStack
from pathlib import Path

import pyarrow.parquet as pq
import pytest

# The benches' servers and how they start Chromium.
from bench.harness.servers import CHROMIUM_FLAGS, chromium_path, static_files
from tests.site.conftest import MARK, PAGE_SIZE, SCRIPT

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(os.environ.get("GDELT_FORECAST_ARTIFACTS", REPO / "test-artifacts")) / "site"
VERSION = "2025.08.0"
PAGE_KINDS = {  # name -> a page of that kind, relative to the site
    "releases": "index.html",
    "release": f"{VERSION}/index.html",
    "leaderboard": f"{VERSION}/leaderboard.html",
    "queries": f"{VERSION}/queries/test.html",
    "records": f"{VERSION}/records/index.html",
    "record-list": f"{VERSION}/records/MCNC-dev-1.html",
    "stories": f"{VERSION}/records/stories-1.html",
    "ev2-list": f"{VERSION}/records/I-CRR-1.html",
}


@pytest.fixture(scope="module")
def chromium(demo_site, planted_site):
    """The browser, started after the sites are built: their agent runs use asyncio, which
    Playwright's synchronous API does not allow beside it."""
    playwright = pytest.importorskip("playwright.sync_api", reason="playwright is in [dev]")
    if not (executable := chromium_path()):
        pytest.skip("no chromium: apt-get install chromium (Debian's package), or set CHROMIUM")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def serve():
    """``serve(folder)``: the URL of a server on 127.0.0.1 for ``folder``; stopped at the end."""
    with ExitStack() as servers:
        yield lambda folder: servers.enter_context(static_files(folder))


class Tab:
    """A page that records everything that went wrong on it: console errors and warnings,
    uncaught errors, failed requests, error responses and dialogs (alert() and the like)."""

    def __init__(self, browser):
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.problems: list[str] = []
        on = self.page.on
        on("console", lambda m: m.type in ("error", "warning") and self._add(f"console: {m.text}"))
        on("pageerror", lambda e: self._add(f"error: {e}"))
        on("requestfailed", lambda r: self._add(f"failed: {r.url} {r.failure}"))
        on("response", lambda r: r.status >= 400 and self._add(f"{r.status}: {r.url}"))
        on("dialog", lambda d: (self._add(f"dialog: {d.message}"), d.dismiss()))

    def _add(self, problem: str) -> None:
        self.problems.append(problem)

    def open(self, url: str):
        self.page.goto(url)
        self.page.wait_for_load_state("networkidle")
        return self.page

    def close(self) -> None:
        self.page.close()


@pytest.fixture
def tab(chromium):
    opened = Tab(chromium)
    yield opened
    opened.close()


def _base(site: Path, how: str, serve) -> str:
    return serve(site) if how == "http" else site.as_uri() + "/"


def _accessible(page) -> list[str]:
    """What a screen-reader or keyboard user would miss on ``page``."""
    return page.evaluate(
        """() => {
        const out = [];
        if (document.querySelectorAll('h1').length !== 1) out.push('not one h1');
        if (!document.documentElement.lang) out.push('no lang');
        for (const img of document.images) if (!img.alt) out.push('no alt: ' + img.src);
        for (const el of document.querySelectorAll('input, select'))
            if (!el.labels || !el.labels.length) out.push('unlabelled ' + el.name);
        for (const t of document.querySelectorAll('table'))  // the card's own: under its headings
            if (!t.caption && !t.closest('.card')) out.push('no caption');
        for (const b of document.querySelectorAll('button'))
            if (!b.textContent.trim()) out.push('empty button');
        return out;
    }"""
    )


@pytest.mark.parametrize("how", ["http", "file"])
def test_every_page_kind_opens_cleanly(demo_site, tab, serve, how):
    base = _base(demo_site, how, serve)
    runs = sorted((demo_site / VERSION / "runs").iterdir())
    stories = sorted((demo_site / VERSION / "stories").iterdir())
    kinds = PAGE_KINDS | {
        "story": stories[0].relative_to(demo_site).as_posix(),
        "run": (runs[0] / "index.html").relative_to(demo_site).as_posix(),
        "trace": (runs[0] / "2025-08-02_USA_RUS_h1.html").relative_to(demo_site).as_posix(),
    }
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for kind, path in kinds.items():
        page = tab.open(base + path)
        assert tab.problems == [], (kind, tab.problems)
        assert _accessible(page) == [], kind
        # Every stylesheet and script came, from the site itself.
        assert page.evaluate("getComputedStyle(document.body).margin") == "0px", kind
        page.screenshot(path=str(ARTIFACTS / f"{kind}-{how}.png"), full_page=kind != "story")
    # The plots load (the release page shows them) and say what they show.
    page = tab.open(base + PAGE_KINDS["release"])
    sizes = page.evaluate("Array.from(document.images, i => [i.alt, i.naturalWidth])")
    assert len(sizes) == 7 and all(alt and width > 0 for alt, width in sizes)
    # The keyboard reaches the content first: the skip link, then into main.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.id") == "main"


def _column(page, table: str, header: str) -> list[str]:
    index = page.evaluate(
        "([t, h]) => Array.from(document.querySelectorAll(t + ' thead th'))"
        ".findIndex(th => th.textContent.trim() === h)",
        [table, header],
    )
    return page.evaluate(
        "([t, i]) => Array.from(document.querySelector(t).tBodies[0].rows,"
        " r => r.cells[i].dataset.sort ?? r.cells[i].textContent.trim())",
        [table, index],
    )


def test_a_leaderboard_sorts_by_a_column_both_ways_by_mouse_and_keyboard(demo_site, tab, serve):
    page = tab.open(serve(demo_site) + PAGE_KINDS["leaderboard"])
    table = "#mirai-subset-all"
    assert len(_column(page, table, "Model")) == 4  # two runs, the two baselines
    header = page.locator(f"{table} thead th", has_text="2nd F1")
    header.get_by_role("button").click()
    up = [float(v) for v in _column(page, table, "2nd F1")]
    assert up == sorted(up) and len(set(up)) > 1
    assert header.get_attribute("aria-sort") == "ascending"
    header.get_by_role("button").click()
    assert [float(v) for v in _column(page, table, "2nd F1")] == sorted(up, reverse=True)
    assert header.get_attribute("aria-sort") == "descending"
    page.locator(f"{table} thead th", has_text="Model").get_by_role("button").focus()
    page.keyboard.press("Enter")
    models = _column(page, table, "Model")
    assert models == sorted(models, key=str.casefold) or models == sorted(models)
    assert tab.problems == []


def test_the_queries_filter_by_country_pair_relation_and_horizon_and_page(demo_site, tab, serve):
    queries = pq.read_table(demo_site.parent / "releases" / VERSION / "testset/queries.parquet")
    rows = queries.to_pylist()
    assert len(rows) > PAGE_SIZE
    page = tab.open(serve(demo_site) + PAGE_KINDS["queries"])
    cells = "document.querySelectorAll('#queries tbody tr td:first-child')"
    ids = f"Array.from({cells}, c => c.textContent)"
    counted = page.locator("form.filter output")
    assert page.evaluate(ids) == [r["query_id"] for r in rows[:PAGE_SIZE]]
    assert counted.text_content() == f"{len(rows)} of {len(rows)} queries; 1–{PAGE_SIZE} shown"
    page.get_by_role("button", name="next").click()
    assert page.evaluate(ids) == [r["query_id"] for r in rows[PAGE_SIZE:]]
    assert page.get_by_role("button", name="next").is_disabled()
    subject, obj = rows[0]["subject"], rows[0]["object"]
    page.get_by_label("Subject").fill(subject.lower())
    page.get_by_label("Object").fill(obj)
    pair = [r["query_id"] for r in rows if (r["subject"], r["object"]) == (subject, obj)]
    assert page.evaluate(ids) == pair
    assert counted.text_content() == f"{len(pair)} of {len(rows)} queries"
    assert page.locator("nav.pager").is_hidden()
    page.get_by_label("Subject").fill("")
    page.get_by_label("Object").fill("")
    code = rows[0]["answer_list"][0]
    page.get_by_label("Relation code").fill(code[:2])
    relation = [r for r in rows if any(c.startswith(code[:2]) for c in r["answer_list"])]
    assert page.evaluate(ids) == [r["query_id"] for r in relation][:PAGE_SIZE]
    page.get_by_label("Relation code").press("Enter")  # no submit: the page stays
    assert page.evaluate(ids) == [r["query_id"] for r in relation][:PAGE_SIZE]
    page.get_by_label("Horizon").select_option("1")
    both = [r["query_id"] for r in relation if r["horizon"] == 1]
    assert page.evaluate(ids) == both[:PAGE_SIZE]
    # A row built by the script reads as the server's: the answer's codes with their names.
    first = page.locator("#queries tbody tr").first
    assert f"{code} " in first.locator("ul.codes").text_content()
    assert tab.problems == []


def test_a_record_opens_with_its_timeline_events_and_their_sources(demo_site, tab, serve):
    release = demo_site.parent / "releases" / VERSION
    news = {d["doc_id"]: d for d in pq.read_table(release / "news").to_pylist()}
    record = pq.read_table(release / "tasks/MCNC/dev.parquet").to_pylist()[0]
    page = tab.open(serve(demo_site) + PAGE_KINDS["records"])
    page.get_by_role("link", name="MCNC dev records").click()
    page.get_by_role("link", name=record["id"]).click()
    page.wait_for_load_state("networkidle")
    article = page.locator(f"article#{record['id']}")
    assert article.is_visible() and page.url.endswith(f"#{record['id']}")
    events = article.locator("ol.timeline li")
    assert events.count() == len(record["background"]) + len(record["target"])
    for i, event in enumerate(record["background"] + record["target"]):
        item = events.nth(i)
        assert event["text"] in item.text_content()
        source = item.get_by_role("link", name=event["source_doc_id"])
        first_seen = str(news[event["source_doc_id"]]["date"])
        assert f"first seen {first_seen}" in item.text_content()
        source.click()  # to the document's row: its title and first-seen date
        row = page.locator(f"tr#doc-{event['source_doc_id']}")
        assert page.url.endswith(f"#doc-{event['source_doc_id']}")
        assert first_seen in row.text_content()
        assert news[event["source_doc_id"]]["title"] in row.text_content()
        assert row.get_by_role("link").get_attribute("href") == news[event["source_doc_id"]]["url"]
        page.go_back()
    assert article.locator("li.gold").count() == 1  # the answer among the options
    assert tab.problems == []


def test_an_agent_trace_opens_from_the_leaderboard(demo_site, tab, serve):
    page = tab.open(serve(demo_site) + PAGE_KINDS["leaderboard"])
    row = page.locator("#mirai-subset-all tbody tr", has_text="function")
    row.get_by_role("link", name="traces").click()
    page.wait_for_load_state("networkidle")
    run = json.loads(next((demo_site.parent / "agents" / VERSION).glob("*function*/run.json"))
                     .read_text())  # fmt: skip
    assert run["run"] in page.locator("h1").text_content()
    page.get_by_role("link", name="2025-08-02_USA_RUS_h1").first.click()
    page.wait_for_load_state("networkidle")
    steps = pq.read_table(next((demo_site.parent / "agents" / VERSION).glob("*function*"))
                          / "steps.parquet").to_pylist()  # fmt: skip
    mine = [s for s in steps if s["query_id"] == "2025-08-02_USA_RUS_h1"]
    shown = page.locator("li.step")
    assert shown.count() == len(mine) == 2
    first = shown.nth(0)
    assert first.locator("pre.thought").text_content() == mine[0]["thought"]
    assert "count_events" in first.locator("h4", has_text="Action").text_content()
    assert json.loads(first.locator("pre.arguments").text_content()) == json.loads(
        mine[0]["arguments"]
    )
    assert first.locator("pre.observation").text_content() == mine[0]["observation"]
    assert "Final Answer" in shown.nth(1).locator("h3").text_content()
    assert tab.problems == []


@pytest.mark.parametrize("how", ["http", "file"])
def test_no_planted_script_handler_or_link_runs(planted_site, tab, serve, how):
    base = _base(planted_site, how, serve)
    shown = 0
    planted = [p for p in sorted(planted_site.rglob("*.html")) if MARK in p.read_text()]
    assert len(planted) >= 6  # the story, the leaderboard and the four traces at least
    for path in planted:
        page = tab.open(base + path.relative_to(planted_site).as_posix())
        ran = page.evaluate("window.__planted")
        assert ran is None, path
        found = page.evaluate(
            """() => [document.scripts.length,
                      document.querySelectorAll('a[href^="javascript:" i]').length,
                      document.querySelectorAll('img[src="x"], [onerror]').length]"""
        )
        assert found == [1, 0, 0], path
        shown += page.locator("body").text_content().count(SCRIPT)
    # The planted text is on the pages as text (title, events, thoughts, observations, model).
    assert shown >= 10
    # Following the unlinked javascript: address is not possible; clicking its text does nothing.
    story = next(p for p in planted if "stories" in p.parts)
    page = tab.open(base + story.relative_to(planted_site).as_posix())
    page.locator("span.unlinked").first.click()
    assert page.evaluate("window.__planted") is None
    assert tab.problems == []
