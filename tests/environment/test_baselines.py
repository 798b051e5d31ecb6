"""The history and frequency baselines against a hand computation on the demo release with
planted past events, and a planted future that would change both if they could see it."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gdelt_forecast.baselines import run_baseline
from gdelt_forecast.cli import main
from gdelt_forecast.ground.config import load_config
from tests.environment.conftest import add_rows

# Past events, planted among the demo's own (the demo's queries are of 2025-08-02, 08-07 and
# 08-12, their cutoffs the days before): relation 010 four times, 042 three, 043 twice, 036
# once; BRA->CHN has 042 and 043 inside the 30-day window of the 2025-08-07 queries and 036
# outside it. JPN, KOR, AUS and NZL pairs are no demo query's.
PAST = [
    ("2025-08-01", "BRA", "042", "CHN"), ("2025-08-03", "BRA", "043", "CHN"),
    ("2025-07-01", "BRA", "036", "CHN"), ("2025-08-02", "JPN", "042", "KOR"),
    ("2025-08-02", "AUS", "042", "NZL"), ("2025-08-04", "JPN", "043", "KOR"),
    ("2025-08-05", "JPN", "010", "KOR"), ("2025-08-05", "KOR", "010", "JPN"),
    ("2025-08-06", "AUS", "010", "NZL"), ("2025-08-06", "NZL", "010", "AUS"),
]  # fmt: skip
# The future: BRA->CHN fighting (190) on the last queries' day (2025-08-12) and after, ten
# times over.
FUTURE = [(f"2025-08-{d:02d}", "BRA", "190", "CHN") for d in range(12, 22)]


def _plant(folder: Path, events: list[tuple], name: str) -> None:
    quads, links = [], []
    for n, (day, head, relation, tail) in enumerate(events):
        quad_id, when = f"{name}-{n}", date.fromisoformat(day)
        quads.append(
            {"date": when, "head": head, "relation": relation, "tail": tail, "quad_id": quad_id}
        )
        links.append({"date": when, "quad_id": quad_id})
    add_rows(folder, "quads", quads, name)
    add_rows(folder, "quad_docs", links, name)


def _copy_with(base: Path, events: list[tuple], name: str, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp(name) / base.name
    shutil.copytree(base, out)
    _plant(out, events, name)
    return out


@pytest.fixture(scope="module")
def with_past(release, tmp_path_factory) -> Path:
    return _copy_with(release, PAST, "past", tmp_path_factory)


@pytest.fixture(scope="module")
def with_future(with_past, tmp_path_factory) -> Path:
    return _copy_with(with_past, FUTURE, "future", tmp_path_factory)


def _answers(folder: Path) -> list[dict]:
    columns = ["subject", "object", "cutoff", "answer"]
    rows = pq.read_table(folder / "testset/queries.parquet", columns=columns).to_pylist()
    return [r | {"answer": json.loads(r["answer"])} for r in rows]


def _events(folder: Path) -> list[tuple]:
    """The release's events as the environment shows them, (date, head, relation, tail): its
    quads that have a document (MIRAI's data_kg.csv), the planted ones among them."""
    linked = set(pq.read_table(folder / "quad_docs", columns=["quad_id"])["quad_id"].to_pylist())
    quads = pq.read_table(
        folder / "quads", columns=["date", "head", "relation", "tail", "quad_id"]
    ).to_pylist()
    return [
        (q["date"], q["head"], q["relation"], q["tail"]) for q in quads if q["quad_id"] in linked
    ]


def _history(events: list[tuple], window_days: int):
    """A query's forecast by hand: the relations of its pair in the window up to its cutoff."""

    def predict(subject: str, obj: str, cutoff: date) -> set:
        first = cutoff - timedelta(days=window_days - 1)
        return {r for d, h, r, t in events if (h, t) == (subject, obj) and first <= d <= cutoff}

    return predict


def _frequency(events: list[tuple], top: int):
    """A query's forecast by hand: the ``top`` relations of the most events up to its cutoff
    (ties to the lower code)."""

    def predict(subject: str, obj: str, cutoff: date) -> set:
        counts = Counter(r for d, _, r, _ in events if d <= cutoff)
        return {r for r, _ in sorted(counts.items(), key=lambda rn: (-rn[1], rn[0]))[:top]}

    return predict


def _prf(predicted: set, gold: set) -> tuple[float, float]:
    hit = len(predicted & gold)
    return (
        100 * hit / len(predicted) if predicted else 0.0,
        100 * hit / len(gold) if gold else 0.0,
    )


def _expected(folder: Path, predict) -> dict:
    """Macro P and R at both levels, computed here from the answers by hand."""
    sums = {"p1": 0.0, "r1": 0.0, "p2": 0.0, "r2": 0.0}
    answers = _answers(folder)
    for q in answers:
        codes = predict(q["subject"], q["object"], q["cutoff"])
        gold2 = {c for codes in q["answer"].values() for c in codes}
        p1, r1 = _prf({c[:2] for c in codes}, set(q["answer"]))
        p2, r2 = _prf(set(codes), gold2)
        for key, value in zip(sums, (p1, r1, p2, r2), strict=True):
            sums[key] += value
    return {k: v / len(answers) for k, v in sums.items()}


def _got(summary) -> dict:
    s = summary.scores
    return {
        "p1": s["first_level"]["precision"],
        "r1": s["first_level"]["recall"],
        "p2": s["second_level"]["precision"],
        "r2": s["second_level"]["recall"],
    }


def test_history_and_frequency_equal_a_hand_computation(with_past):
    cfg = load_config()
    assert cfg.baseline.window_days == 30 and cfg.baseline.frequency_top == 3
    events = _events(with_past)
    history, by_hand = run_baseline(cfg, with_past, "history"), _history(events, 30)
    # 036 (2025-07-01) is outside the window; the demo's own CHN->USA is 020 every day, and
    # 130 on the history days whose pages demo/sample_pages.py puts under 130's URLs.
    assert by_hand("BRA", "CHN", date(2025, 8, 6)) == {"042", "043"}
    assert by_hand("CHN", "USA", date(2025, 8, 11)) == {"020", "130"}
    expected = _expected(with_past, by_hand)
    assert _got(history) == pytest.approx(expected) and expected["p1"] > 0
    frequency, by_hand = run_baseline(cfg, with_past, "frequency"), _frequency(events, 3)
    # 010 four times (planted), then 042 and 043: 020 and 110 have fewer since the history
    # days' pages sit under 130's and 090's URLs (demo/sample_pages.py).
    assert by_hand("BRA", "CHN", date(2025, 8, 6)) == {"010", "042", "043"}
    assert _got(frequency) == pytest.approx(_expected(with_past, by_hand))
    assert history.queries == frequency.queries == len(_answers(with_past))


def test_a_planted_future_changes_no_baseline(with_past, with_future):
    cfg = load_config()
    for method in ("history", "frequency"):
        before = run_baseline(cfg, with_past, method).scores
        after = run_baseline(cfg, with_future, method).scores
        assert after == before, method
    # The plant is real: a cutoff after it sees BRA->CHN 190 ten times.
    from gdelt_forecast.environment import ISOCode, open_environment

    with open_environment(with_future, "2025-08-22") as env:
        assert env.count_events(head_entities=[ISOCode("BRA")], relations=None) >= 10


def test_the_cli_prints_and_writes_json(with_past, capsys):
    assert (
        main(
            [
                "baseline",
                "--release",
                str(with_past),
                "--method",
                "frequency",
                "--split",
                "subset",
                "--json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "frequency" and out["split"] == "subset" and out["queries"] == 2
    assert main(["baseline", "--release", str(with_past / "missing")]) == 1
    assert "no release at" in capsys.readouterr().err


def test_the_llm_baseline_asks_mirais_direct_prompt_and_scores_the_answers(with_past, tmp_path):
    """Against a scripted server: one chat per query with MIRAI's Direct IO prompts; a JSON
    answer, a "Final Answer:" text and an error (nothing predicted) are scored as such; the
    calls are logged and a re-run is answered from the cache."""
    from tests.llm.scripted import ScriptedServer, answer, error, llm_config

    server = ScriptedServer()
    try:
        answers = {r["subject"] + r["object"]: r["answer"] for r in _answers(with_past)}
        queries = pq.read_table(with_past / "testset/queries.parquet").to_pylist()
        by_prompt = {}
        for n, q in enumerate(queries):
            prompt = (
                f"Query: Please forecast the relations that {q['subject_name']} will take "
                f"towards {q['object_name']} on {q['date_nlp']} based on historical "
                f"information up to {q['cutoff_nlp']}. I.e. forecast the relation CAMEO "
                f"codes in query event Event(date={q['date']}, head_entity=ISOCode("
                f"{q['subject']}), relation=CAMEOCode(?), tail_entity=ISOCode("
                f"{q['object']})).\nFinal Answer:"
            )
            gold = answers[q["subject"] + q["object"]]
            by_prompt[prompt] = gold
            if n == 0:
                server.script[prompt] = [error(500)]  # fails every retry: predicts nothing
            elif n == 1:
                server.script[prompt] = [answer(f"Final Answer: {json.dumps(gold)}")]
            else:
                server.script[prompt] = [answer(gold)]
        cfg = llm_config(server, tmp_path / "data")
        summary = run_baseline(cfg, with_past, "llm")
        assert set(server.prompts()) == set(by_prompt)  # exactly MIRAI's query prompt, filled
        system = server.requests[0]["messages"][0]["content"]
        assert system.startswith("You are an expert in forecasting future events")
        assert '{"01": ["010", "011", "012"], "02": ["020", "023"]}' in system
        n = len(queries)
        assert summary.queries == n and summary.llm["failed"] == 1
        assert summary.scores["second_level"]["recall"] == pytest.approx(100 * (n - 1) / n)
        calls = pq.read_table(
            cfg.data_root / "baselines" / with_past.name / "llm_calls.parquet"
        ).to_pylist()
        assert sorted(c["status"] for c in calls)[:3] == ["failed", "fallback", "ok"]
        sent = len(server.requests)
        again = run_baseline(cfg, with_past, "llm")
        assert again.llm["cache_hits"] == n - 1 and again.scores == summary.scores
        assert len(server.requests) > sent  # only the failed one is asked again
        # Its row on the release's leaderboard, once however often it runs.
        board = cfg.data_root / "agents" / with_past.name / "leaderboard.parquet"
        (row,) = pq.read_table(board).to_pylist()
        assert (row["model"], row["action"], row["split"], row["queries"]) == (
            cfg.llm.model,
            "direct",
            "test",
            n,
        )
        assert row["second_level_recall"] == summary.scores["second_level"]["recall"]
        assert row["prompt_version"] == "mirai-direct-v1"
    finally:
        server.stop()


def test_the_leaderboard_lists_the_releases_baselines_among_the_runs(release, tmp_path, capsys):
    """With no run yet, `leaderboard` prints the release's history and frequency baselines
    (its manifest's figures) on each split."""
    args = ["leaderboard", "--release", str(release), "--data-root", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    baselines = json.loads((release / "manifest.json").read_text())["baselines"]
    printed = {
        (line[:28].strip(), line.split()[4]): line.split()[-2:]
        for line in out.splitlines()
        if " baseline " in line
    }
    assert printed == {
        (f"{method} baseline", split): [
            f"{scores['second_level']['f1']:.1f}",
            f"{scores['quad']['kl']:.2f}",
        ]
        for method, splits in baselines.items()
        for split, scores in splits.items()
    }


def test_the_cli_offers_every_method():
    from gdelt_forecast.baselines import ALL_METHODS
    from gdelt_forecast.pipeline.stages import STAGES

    method = next(p for p in STAGES["baseline"].parameters if p.name == "method")
    assert method.schema["enum"] == list(ALL_METHODS)
