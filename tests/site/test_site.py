"""The site's files, read as text: every page kind is there with the release's figures (a
live round's pages too), every page sets the Content-Security-Policy, planted markup reaches
the pages only escaped, and a re-run replaces the site whole but never a folder it did not
build."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from markupsafe import escape

from gdelt_forecast.cli import main
from gdelt_forecast.rounds.questions import open_round
from gdelt_forecast.rounds.resolve import resolve_round
from gdelt_forecast.site import releases
from gdelt_forecast.site.build import MARKER, build_site
from gdelt_forecast.site.render import CSP, slug, web_url
from tests.rounds.conftest import NOW, OPEN
from tests.site.conftest import IMG, PAGE_SIZE, SCRIPT, _edit, _root

VERSION = "2025.08.0"


def pages(site: Path) -> list[Path]:
    return sorted(site.rglob("*.html"))


def test_every_page_kind_is_built_with_the_releases_figures(demo_site):
    release = demo_site.parent / "releases" / VERSION
    manifest = json.loads((release / "manifest.json").read_text())
    runs = sorted(p.name for p in (demo_site.parent / "agents" / VERSION).iterdir() if p.is_dir())
    assert len(runs) == 2
    here = demo_site / VERSION
    stories = pq.read_table(release / "timelines/complex_events.parquet").to_pylist()
    expected = [
        demo_site / "index.html", here / "index.html", here / "leaderboard.html",
        here / "queries/test.html", here / "queries/subset.html", here / "records/index.html",
        here / "records/stories-1.html", here / "records/MCNC-dev-1.html",
        here / "records/I-CEC-1.html",
        *(here / "stories" / f"{slug(s['complex_event_id'])}.html" for s in stories),
        *(here / "runs" / run / "index.html" for run in runs),
        *(here / "runs" / run / "2025-08-02_USA_RUS_h1.html" for run in runs),
    ]  # fmt: skip
    assert [p for p in expected if not p.is_file()] == []
    index = (demo_site / "index.html").read_text()
    queries = next(f["rows"] for f in manifest["files"] if f["path"] == "testset/queries.parquet")
    row = re.search(rf'<tr>\s*<td data-sort="{VERSION}">.*?</tr>', index, re.S).group(0)
    assert "sound" in row and manifest["code_version"]["git_commit"][:12] in row
    assert f'<td class="n" data-sort="{queries}">{queries}</td>' in row
    # The card, manifest and plots travel with the site; the data files are linked.
    assert (here / "files/manifest.json").read_bytes() == (release / "manifest.json").read_bytes()
    assert (here / "plots/funnel.png").read_bytes() == (release / "plots/funnel.png").read_bytes()
    page = (here / "index.html").read_text()
    assert 'href="../../releases/2025.08.0/testset/queries.parquet"' in page
    assert '<img src="plots/funnel.png" alt="funnel"' in page
    # The test split's page shows its first page of queries; its data file holds them all.
    assert (here / "queries/test.html").read_text().count("<tr>") == PAGE_SIZE + 1  # + head
    data = json.loads((here / "queries/test.js").read_text().split(" = ", 1)[1].rstrip(";\n"))
    want = pq.read_table(release / "testset/queries.parquet").column("query_id").to_pylist()
    assert [row[0] for row in data["rows"]] == want and data["page_size"] == PAGE_SIZE


def test_every_page_sets_the_policy_and_loads_nothing_from_elsewhere(demo_site, planted_site):
    for site in (demo_site, planted_site):
        for page in pages(site):
            html = page.read_text()
            assert f'<meta http-equiv="Content-Security-Policy" content="{escape(CSP)}">' in html
            # Scripts only by path (site.js; a query page's data file before it), none inline.
            tags = re.findall(r"<script[^>]*>", html)
            root = "../" * (len(page.relative_to(site).parts) - 1)
            assert tags[-1] == f'<script src="{root}assets/site.js" defer>', page
            assert all(" src=" in tag for tag in tags), page
            assert html.count("</script>") == html.count("<script"), page
            assert not re.search(r'(src|href)="(https?:)?//', html.split("</head>")[0]), page


def test_planted_markup_is_shown_as_text_never_as_markup(planted_site):
    texts = {p: p.read_text() for p in pages(planted_site)}
    escaped_script = SCRIPT.replace("<", "&lt;").replace(">", "&gt;")
    for page, html in texts.items():
        assert SCRIPT not in html and "<img src=x" not in html, page
        assert 'href="javascript:' not in html.lower(), page
    here = planted_site / VERSION
    story = next(p for p in texts if "stories" in p.parts and "News &lt;script&gt;" in texts[p])
    for shown in ("News ", "Event ", "Seen ", "EV2 "):  # title, event, background, EV2 event
        assert f"{shown}{escaped_script}" in texts[story], shown
    # The javascript: URL is shown as text where a document's link would be.
    assert (
        '<span class="unlinked" title="not an http(s) address: shown, not linked">News '
        in texts[story]
    )
    traces = [p for p in texts if "runs" in p.parts and p.name != "index.html"]
    assert len(traces) == 4
    assert all(f"Thought {escaped_script}" in texts[p] for p in traces)
    code = [p for p in traces if "_code_" in str(p)]
    assert all(f"Observed {escaped_script}" in texts[p] for p in code)
    board = texts[here / "leaderboard.html"]
    assert f"Model {escaped_script}" in board and IMG.replace("<", "&lt;")[:20] in board
    # The release's files changed: verify says so on its page and in the index.
    assert "problem(s)</span>" in texts[planted_site / "index.html"]


def test_a_rerun_replaces_the_site_whole_and_a_foreign_folder_is_refused(
    demo_site, tmp_path, capsys
):
    root = demo_site.parent
    args = ["site", "--config", "configs/demo.yaml", "--data-root", str(root)]
    out = tmp_path / "site"
    assert main([*args, "--out", str(out)]) == 0
    first = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    (out / VERSION / "stale.html").write_text("from a release that is gone")
    capsys.readouterr()
    assert main([*args, "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["pages"] == len(pages(out)) and summary["releases"] == 1
    again = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert again == first  # the same site, byte for byte, without the stale page
    assert (out / MARKER).is_file() and not list(tmp_path.glob(".site.*"))
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    capsys.readouterr()
    assert main([*args, "--out", str(foreign)]) == 1
    assert "is not empty and not a site this command built" in capsys.readouterr().err
    assert (foreign / "notes.txt").read_text() == "keep me"


@pytest.mark.parametrize(
    "url, linked",
    [("https://example.org/a?b=1", True), ("http://example.org", True),
     ("javascript:alert(1)", False), (" JavaScript:alert(1)", False), ("data:text/html,x", False),
     ("//example.org/x", False), ("/relative", False), ("http:///nohost", False), (None, False)],
)  # fmt: skip
def test_only_http_and_https_addresses_become_links(url, linked):
    assert (web_url(url) is not None) == linked


def test_file_names_of_odd_ids_are_plain_and_distinct():
    assert slug("2025-08-02_USA_RUS_h1") == "2025-08-02_USA_RUS_h1"
    odd = [slug("meta-llama/Llama 3"), slug("meta-llama_Llama 3"), slug("../../etc/passwd")]
    assert len(set(odd)) == 3 and all(re.fullmatch(r"[A-Za-z0-9._-]+", s) for s in odd)
    assert not any(s.startswith(".") for s in odd)


def test_the_site_shows_each_round_its_forecasters_scores_and_answers(demo_cfg, release, tmp_path):
    root = tmp_path / "data"
    shutil.copytree(demo_cfg.data_root, root, symlinks=True)
    settings = demo_cfg.rounds.model_copy(update={"horizons": [4, 9], "grace_days": 0})
    cfg = demo_cfg.model_copy(update={"data_root": root, "rounds": settings})
    open_round(cfg, "demo", OPEN, replay=True, now=NOW)
    resolve_round(cfg, "demo")
    build_site(cfg, tmp_path / "site")
    site = tmp_path / "site"

    first = (site / "index.html").read_text()
    assert 'href="rounds/index.html"' in first
    index = (site / "rounds/index.html").read_text()
    assert 'href="../rounds/demo.html"' in index and ">replay<" in index and ">resolved<" in index
    page = (site / "rounds/demo.html").read_text()
    for forecaster in ("history", "frequency", "base-rate", "always-0.5"):
        assert f"<td>{forecaster}</td>" in page or f"<td>{forecaster} " in page
    questions = pq.read_table(root / "rounds/demo/questions.parquet").to_pylist()
    assert page.count("<details>") == len(questions)
    assert len(re.findall(r"<td>(?:yes|no) \(\d+ events\)</td>", page)) == sum(
        q["kind"] == "binary" for q in questions
    )
    for html in (index, page):
        assert f'content="{escape(CSP)}"' in html
        assert not re.search(r"""(?:src|href)="(?:https?:)?//""", html)


def test_a_release_is_verified_again_only_when_a_file_of_it_changed(
    release, tmp_path_factory, monkeypatch
):
    """The site remembers each release's verdict while its files stay as they were (a year of
    monthly releases would otherwise verify twelve histories at every build)."""
    root = _root(tmp_path_factory, release, "verdicts")
    folder = root / "releases" / release.name
    an_hour_ago = time.time_ns() - 3600 * 10**9  # settled: old enough to trust its mtime
    for path in folder.rglob("*"):
        os.utime(path, ns=(an_hour_ago, an_hour_ago))
    calls = []
    real = releases.verify
    monkeypatch.setattr(releases, "verify", lambda f: calls.append(f.name) or real(f))
    args = ["site", "--config", "configs/demo.yaml", "--data-root", str(root)]
    args += ["--out", str(root / "site")]
    assert main(args) == 0 and main(args) == 0
    assert calls == [VERSION]  # the second build trusted the first one's verdict
    assert "problem(s)</span>" not in (root / "site" / "index.html").read_text()
    news = folder / "news/2025-07-part-0.parquet"
    _edit(news, lambda rows: rows[0].update(title="Changed since"))
    os.utime(news, ns=(an_hour_ago - 10**9, an_hour_ago - 10**9))
    assert main(args) == 0
    assert calls == [VERSION, VERSION]
    assert "problem(s)</span>" in (root / "site" / "index.html").read_text()
