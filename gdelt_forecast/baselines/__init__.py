"""Reference scores of a release's test set: forecasts that use nothing but the agent
environment (:mod:`gdelt_forecast.environment`), so no baseline sees a row on or after its
query's date, scored by MIRAI's metrics (:mod:`gdelt_forecast.scoring.mirai`).

- ``history``: the second-level relations between the query's subject and object in the
  ``baseline.window_days`` days up to its last visible day (its ``cutoff`` column);
- ``frequency``: the ``baseline.frequency_top`` most frequent relations of all events
  before the cutoff, whoever took part;
- ``llm``: MIRAI's Direct IO agent (:mod:`gdelt_forecast.baselines.direct`), the model's
  answer to the query alone (no tools, no data), with the prompts of MIRAI's appendix K
  (``prompts/mirai-direct-v1``), through the LLM client of the timelines (cache, retries,
  ``llm_calls.parquet`` under ``<data_root>/baselines/<release>/``), entered on the
  release's leaderboard beside the agents. Releases carry the other two only: this one
  needs a server and a model, and says more about the model than about the test set.

A query of horizon h on day t sees the days up to t - h (its ``cutoff``): its environment
opens with the cutoff the day after, one environment per distinct cutoff.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path

import pyarrow.parquet as pq

from gdelt_forecast.contract.names import BASELINES, QUERIES
from gdelt_forecast.environment import Date, DateRange, Environment, ISOCode
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.scoring import evaluate
from gdelt_forecast.scoring.answers import answer_dict
from gdelt_forecast.scoring.queries import load_queries

ALL_METHODS = (*BASELINES, "llm")


class BaselineError(StageError):
    """A baseline that cannot run as asked."""


def history(env: Environment, cfg: Config, subject: str, obj: str, last: date) -> dict:
    first = last - timedelta(days=cfg.baseline.window_days - 1)
    seen = env.get_relation_distribution(
        DateRange(Date(first.isoformat()), Date(last.isoformat())),
        [ISOCode(subject)],
        [ISOCode(obj)],
    )
    return answer_dict([code.code for code in seen])


class Frequency:
    """``frequency``'s answer at each cutoff, in ascending order of cutoffs: the relation
    counts of all events up to the cutoff, kept as a running sum to which each cutoff's
    environment adds the days since the previous one (written by hand: no library keeps a
    running top-k), so the history is read once per release rather than once per cutoff."""

    def __init__(self, top: int):
        self.top, self.counts = top, Counter()
        self.through: date | None = None  # the last cutoff counted
        self.answer = answer_dict([])

    def __call__(self, env: Environment, cfg: Config, subject: str, obj: str, last: date):
        if self.through != last:
            if self.through is not None and last < self.through:
                raise ValueError(f"cutoff {last} comes before {self.through}: ask in order")
            since = None  # the first: every visible day
            if self.through is not None:
                start = (self.through + timedelta(days=1)).isoformat()
                since = DateRange(Date(start), Date(last.isoformat()))
            self.counts.update({c.code: n for c, n in env.get_relation_distribution(since).items()})
            ranked = sorted(self.counts.items(), key=lambda item: (-item[1], item[0]))
            self.answer = answer_dict([code for code, _ in ranked[: self.top]])
            self.through = last
        return self.answer


@dataclass
class Summary(StageSummary):
    release: str
    method: str
    split: str
    queries: int
    scores: dict = field(repr=False)
    seconds: float = 0.0
    llm: dict | None = None  # the llm method's call counts and tokens
    submitted: str | None = None  # a round's run: the submission's line

    def line(self) -> str:
        if self.submitted:
            calls = self.llm or {}
            return (
                f"baseline {self.method} on {self.split} ({self.queries} queries, "
                f"{calls.get('calls', 0)} llm calls, {calls.get('failed', 0)} failed): "
                f"{self.submitted}"
            )
        first, second = self.scores["first_level"], self.scores["second_level"]
        calls = f"; {self.llm['calls']} llm calls, {self.llm['failed']} failed" if self.llm else ""
        return (
            f"baseline {self.method} on {self.split} ({self.queries} queries): 1st-level "
            f"P/R/F1 {first['precision']:.1f}/{first['recall']:.1f}/{first['f1']:.1f}, "
            f"2nd-level {second['precision']:.1f}/{second['recall']:.1f}/{second['f1']:.1f}, "
            f"KL(quad) {self.scores['quad']['kl']:.2f}{calls} ({self.seconds:.1f} s)"
        )


def run_baseline(
    cfg: Config, folder: Path, method: str, split: str = "test", round: str | None = None
) -> Summary:
    """Forecast every query of ``split`` with ``method`` and score the forecasts; or, given
    ``round`` (``llm`` only), answer the round's relation queries and submit the answers to
    it as ``direct-io`` (:mod:`gdelt_forecast.rounds.entrants`)."""
    if round is not None and method != "llm":
        raise BaselineError(
            f"--round {round}: the reference forecasters (history, frequency, base rate, "
            "always 0.5) submit when the round opens; --round takes --method llm"
        )
    if method == "llm":
        # Here, not at the top: the llm package (and openai) loads only when an LLM is asked.
        from gdelt_forecast.baselines.direct import COLUMNS, direct_io, enter

        if round is not None:
            return _direct_io_round(cfg, folder, round)
        path = folder / QUERIES[split]
        rows = pq.read_table(path, columns=COLUMNS).to_pylist()
        calls = DataRoot(cfg.data_root).baselines / folder.name / "llm_calls.parquet"
        predictions, llm = direct_io(rows, cfg, calls)
        scores = evaluate.score(load_queries(path), predictions)
        enter(cfg, folder.name, split, scores, llm, len(predictions))
        return Summary(folder.name, method, split, len(predictions), scores, llm=llm)
    return run_baselines(cfg, folder, [method], [split])[method, split]


def _direct_io_round(cfg: Config, folder: Path, round_id: str) -> Summary:
    """Direct IO on a round's relation queries, submitted; its calls and submission under
    ``baselines/<release>/round-<id>/`` (the model alone answers: it reads no data)."""
    from gdelt_forecast.baselines.direct import direct_io
    from gdelt_forecast.rounds import entrants

    rows = entrants.relation_queries(cfg, round_id)
    out = DataRoot(cfg.data_root).baselines / folder.name / f"round-{round_id}"
    predictions, llm = direct_io(rows, cfg, out / "llm_calls.parquet")
    submitted = entrants.submit_answers(
        cfg, round_id, "direct-io", cfg.llm.model, predictions, out / "submission.jsonl"
    )
    return Summary(folder.name, "llm", f"round-{round_id}", len(predictions), {}, llm=llm,
                   submitted=submitted.line())  # fmt: skip


def run_baselines(
    cfg: Config, folder: Path, methods: Sequence[str], splits: Sequence[str]
) -> dict[tuple[str, str], Summary]:
    """Every non-LLM ``method`` on every ``split``, opening one environment per distinct
    cutoff for all of them (the subset's queries are the test set's)."""
    t0 = time.monotonic()
    rows = {
        split: pq.read_table(
            folder / QUERIES[split], columns=["query_id", "subject", "object", "cutoff"]
        ).to_pylist()
        for split in splits
    }
    queries = {r["query_id"]: r for split_rows in rows.values() for r in split_rows}
    predictions: dict[str, dict[str, dict]] = {m: {} for m in methods}
    predict = {"history": history, "frequency": Frequency(cfg.baseline.frequency_top)}
    since, window = None, timedelta(days=cfg.baseline.window_days - 1)
    for cutoff in sorted({r["cutoff"] for r in queries.values()}):
        # No fuzzy look-ups here, so no embedding model: a release being written has no
        # manifest yet to name one.
        with Environment(folder, cutoff + timedelta(days=1), embed=None, since=since) as env:
            for r in (r for r in queries.values() if r["cutoff"] == cutoff):
                for method in methods:
                    predictions[method][r["query_id"]] = predict[method](
                        env, cfg, r["subject"], r["object"], cutoff
                    )
        # A later cutoff reads its own window (history's) and the days since this one
        # (frequency's running sum), all on or after this one's window: its environment
        # loads those days, not the whole history.
        since = cutoff - window
    seconds = time.monotonic() - t0
    out = {}
    for split in splits:
        loaded = load_queries(folder / QUERIES[split])
        for method in methods:
            scores = evaluate.score(loaded, predictions[method])
            out[method, split] = Summary(
                folder.name, method, split, len(rows[split]), scores, seconds
            )
    return out
