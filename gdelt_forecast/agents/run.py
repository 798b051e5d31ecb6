"""``gdelt-forecast agent``: MIRAI's ReAct agents on a release's test set, scored.

Every query (and each of ``--samples`` K seeded samples) runs its agent
(:mod:`gdelt_forecast.agents.react`) with the environment opened at its cutoff, the API
restricted to ``--apis``, and, for ``--action code``, its own sandbox; queries run
concurrently, their model calls sharing one client (cache, retries, ``llm.max_concurrency``).
``<data_root>/agents/<release>/<run>/`` gets

- ``steps.parquet``: one row per step (thought, tool, arguments, observation and its
  length, state, tokens as the server counted them, latency, error);
- ``queries.parquet``: one row per query and sample (end state, steps, answer, tokens);
- ``predictions.jsonl``: sample 0's answers, which the scorer reads;
- ``run.json``: what ran (model, action, APIs, split, samples, prompt version, the
  sandbox's layers) and the scores;

and the release's ``leaderboard.parquet`` a row per run. A run is named by what it runs,
so the same command resumes a killed run: each finished query is journaled at once
(``journal/*.jsonl``) and skipped on the next start; an unfinished one starts over, its
model calls answered from the cache.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.agents import leaderboard, prompts
from gdelt_forecast.agents.react import END_STATES, REPEATED, REPEATED_STEP, Agent, Query, Run
from gdelt_forecast.contract.names import QUERIES
from gdelt_forecast.environment import TOOLS, call_tool, open_environment, release_folder
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.ground.errors import StageError
from gdelt_forecast.ground.files import write_json
from gdelt_forecast.ground.parquet_io import write_parquet
from gdelt_forecast.ground.progress import progress
from gdelt_forecast.ground.summary import StageSummary
from gdelt_forecast.ground.wellformed import mended
from gdelt_forecast.pipeline.stage_record import digest
from gdelt_forecast.rounds import entrants
from gdelt_forecast.scoring import evaluate
from gdelt_forecast.scoring.mirai import clean_prediction, score_query
from gdelt_forecast.scoring.queries import load_queries

ACTIONS = ("function", "code")
REFUSED = "is not among this run's functions"
_COLUMNS = list(Query.__dataclass_fields__) + ["cutoff"]


class AgentError(StageError):
    """The agents cannot run: no such release, split or action."""


@dataclass
class AgentSummary(StageSummary):
    release: str
    run: str
    queries: int
    samples: int
    end_states: dict[str, int]
    scores: dict
    consistency: dict = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    resumed: int = 0
    seconds: float = 0.0
    path: str = ""
    submitted: str | None = None  # a round's run: the submission's line

    def line(self) -> str:
        states = ", ".join(f"{k} {v}" for k, v in self.end_states.items() if v)
        lines = [
            f"agent {self.run} on {self.release}: {self.queries} queries x {self.samples} "
            f"({self.resumed} resumed); {states}; {self.prompt_tokens:,} prompt + "
            f"{self.completion_tokens:,} completion tokens ({self.seconds:.1f} s)",
            self.submitted or evaluate.render(self.scores),
        ]
        for name, scores in self.consistency.items():  # MIRAI's Figure 4a, with --samples
            f1 = (scores[level]["f1"] for level in ("first_level", "second_level"))
            lines.append("{}: first-level F1 {:.2f}, second-level F1 {:.2f}".format(name, *f1))
        return "\n".join(lines)


def run_name(cfg: Config, split: str, action: str, apis: str, samples: int) -> str:
    """What the run runs, readable, and a digest of the settings that shape its answers, so
    that a command resumes its own run and never another's."""
    model = re.sub(r"[^A-Za-z0-9._-]+", "_", cfg.llm.model)
    settings = {
        "llm": cfg.llm.model_dump(mode="json", include={"temperature", "max_tokens", "seed"}),
        "agents": cfg.agents.model_dump(mode="json"),
    }
    return (
        f"{model}_{action}_{apis}_{split}_k{samples}_s{cfg.agents.max_steps}_"
        f"{prompts.PROMPT_VERSION}_{digest(settings)[:8]}"
    )


def run_agents(
    cfg: Config, release: str, split: str = "subset", action: str = "function",
    apis: str = "all", samples: int = 1, round: str | None = None,
) -> AgentSummary:  # fmt: skip
    """Run the agents on the release's ``split``, scored; or, given ``round``, on the round's
    relation queries over the release's history before its open date, submitted to the round
    as ``agent-<action>-<apis>`` (:mod:`gdelt_forecast.rounds.entrants`)."""
    if split not in QUERIES or action not in ACTIONS or apis not in prompts.APIS or samples < 1:
        raise AgentError(
            f"agent: split {split!r}, action {action!r}, apis {apis!r}, samples {samples}: "
            f"choose from {sorted(QUERIES)}, {list(ACTIONS)}, {sorted(prompts.APIS)}, >= 1"
        )
    if samples > 1 and cfg.llm.temperature == 0:
        raise AgentError("agent: --samples > 1 draws the same answer K times at temperature 0; "
                         "set llm.temperature (MIRAI samples at 0.4)")  # fmt: skip
    t0, before = time.monotonic(), mended()
    folder = release_folder(release, cfg)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    if round is not None:
        split = f"round-{round}"
        rows = entrants.relation_queries(cfg, round)
    else:
        rows = pq.read_table(folder / QUERIES[split], columns=_COLUMNS).to_pylist()
    name = run_name(cfg, split, action, apis, samples)
    out = DataRoot(cfg.data_root).agents / folder.name / name
    journal = _Journal(out / "journal")
    done = journal.finished()
    todo = [(r, k) for r in rows for k in range(samples) if (r["query_id"], k) not in done]
    history_start = date.fromisoformat(manifest["history"]["start"]).strftime("%B %d, %Y")
    layers = asyncio.run(_run_all(cfg, folder, todo, action, apis, history_start, journal))
    if not layers and (out / "run.json").exists():  # every query resumed: as the run said
        layers = json.loads((out / "run.json").read_text(encoding="utf-8"))["sandbox_layers"]
    runs, steps = journal.read()
    predictions = {r["query_id"]: r["answer"] or {} for r in runs if r["sample"] == 0}
    scores, consistency, submitted = {}, {}, None
    if round is None:
        queries = load_queries(folder / QUERIES[split])
        scores = evaluate.score(queries, predictions)
        consistency = _consistency(queries, runs, samples) if samples > 1 else {}
    _write(out, runs, steps, predictions)
    if round is not None:  # the answers are the round's to score, once it resolves
        submitted = entrants.submit_answers(
            cfg, round, f"agent-{action}-{apis}", cfg.llm.model, predictions,
            out / "submission.jsonl",
        ).line()  # fmt: skip
    summary = AgentSummary(
        release=folder.name,
        run=name,
        queries=len(rows),
        samples=samples,
        end_states={s: sum(r["end_state"] == s for r in runs) for s in END_STATES},
        scores=scores,
        consistency=consistency,
        prompt_tokens=sum(r["prompt_tokens"] for r in runs),
        completion_tokens=sum(r["completion_tokens"] for r in runs),
        resumed=len(done),
        seconds=time.monotonic() - t0,
        path=str(out),
        submitted=submitted,
    )
    meta = {
        "release": folder.name,
        "release_created": manifest.get("created"),
        "run": name,
        "model": cfg.llm.model,
        "action": action,
        "apis": apis,
        "split": split,
        "round": round,
        "samples": samples,
        "prompt_version": prompts.PROMPT_VERSION,
        "agents": cfg.agents.model_dump(mode="json"),
        "temperature": cfg.llm.temperature,
        "seed": cfg.llm.seed,
        "sandbox_layers": layers,
        **_tools(steps, action),
        "mended": mended(since=before),  # this run's own, by boundary
        "finished": datetime.now(UTC).replace(microsecond=0).isoformat(),
        "summary": summary.to_dict(),
    }
    write_json(out / "run.json", meta)
    if round is None:  # a round's runs are ranked on the round's leaderboard
        leaderboard.add(out.parent / leaderboard.FILE, meta)
    return summary


async def _run_all(cfg, folder: Path, todo, action, apis, history_start, journal) -> list[str]:
    from gdelt_forecast.agents.sandbox import Sandbox
    from gdelt_forecast.llm.batch import Session

    envs: dict[date, tuple] = {}  # cutoff -> (environment, its lock): calls come from threads
    layers: list[str] = []

    def environment(cutoff: date):
        if cutoff not in envs:
            envs[cutoff] = (open_environment(folder, cutoff + timedelta(days=1), cfg),
                            threading.Lock())  # fmt: skip
        return envs[cutoff]

    def serve(cutoff: date):
        env, lock = environment(cutoff)

        def call(name: str, arguments: dict | str):
            with lock:
                return call_tool(env, name, arguments, cfg.agents.call_s)

        return call

    async def one(row: dict, sample: int) -> None:
        seed = None if cfg.llm.seed is None and sample == 0 else (cfg.llm.seed or 0) + sample
        query = Query(**{k: str(row[k]) for k in Query.__dataclass_fields__})
        agent = Agent(session, cfg.agents, action, apis, history_start, seed)
        call = serve(row["cutoff"])
        if action == "function":
            run = await agent.run(query, sample, _function_act(call, prompts.APIS[apis], apis))
        else:
            box = Sandbox(cfg.agents.sandbox, call, prompts.parameters(apis))
            try:
                run = await agent.run(query, sample, _code_act(box))
                layers[:] = box.layers or layers
            finally:
                await asyncio.to_thread(box.close)
        journal.add(run)

    try:
        async with Session(cfg) as session:
            slots = asyncio.Semaphore(cfg.llm.max_concurrency)

            async def bounded(row, sample):
                async with slots:
                    await one(row, sample)

            tasks = [asyncio.create_task(bounded(r, k)) for r, k in todo]
            try:
                for done in progress(asyncio.as_completed(tasks), len(tasks), "agents"):
                    await done
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
    finally:
        for env, _ in envs.values():
            env.close()
    return layers


def _tools(steps: list[dict], action: str) -> dict[str, dict[str, int]]:
    """What the traces asked for: ``tools_called``, each tool the action ran (an environment
    function, or ``run_code``), and ``tools_refused``, the rest (outside the run's set, or no
    tool at all), never run; a repeated action is neither, as it is not run again. The
    leaderboard marks a run that called outside its set."""
    runs = {"run_code"} if action == "code" else set(TOOLS)
    called, refused = Counter(), Counter()
    for s in steps:
        if s["tool"] is None or s["state"] in (REPEATED_STEP, REPEATED):
            continue  # no action, or one not run again
        ran = s["tool"] in runs and REFUSED not in (s["error"] or "")
        (called if ran else refused)[s["tool"]] += 1
    return {"tools_called": dict(sorted(called.items())),
            "tools_refused": dict(sorted(refused.items()))}  # fmt: skip


def _function_act(call, offered: tuple[str, ...], apis: str):
    async def act(name: str, arguments: str) -> tuple[str, str | None]:
        if name in TOOLS and name not in offered:  # MIRAI's Table 2 compares the sets:
            return "", f"ValueError: {name} {REFUSED} ({apis})"  # none may reach another's
        try:
            value = await asyncio.to_thread(call, name, arguments)
        except Exception as exc:  # noqa: BLE001  as in the code action: a call's failure
            return "", f"{type(exc).__name__}: {exc}"  # is its observation, not the run's
        if isinstance(value, (list, dict)) and not value:
            return "Empty output from the function call.", None
        # An article's text as it is (not as a JSON string with its newlines escaped).
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False), None

    return act


def _code_act(box):
    async def act(name: str, arguments: str) -> tuple[str, str | None]:
        if name != "run_code":
            return "", f"unknown function {name!r}: the one function is run_code"
        try:
            code = json.loads(arguments)["code"]
            if not isinstance(code, str):
                raise TypeError("code is not a string")
        except (ValueError, KeyError, TypeError, RecursionError) as exc:
            return "", f"run_code takes one argument, code, a string ({exc})"[:300]
        outcome = await asyncio.to_thread(box.run, code)
        if outcome.error:
            return outcome.output, outcome.error
        output = outcome.output
        if outcome.dropped:
            output += f"\n[output cut in the sandbox: {outcome.dropped:,} more characters]"
        if output:
            return output, None
        if "print(" in code:
            return (
                "No printed output from the action because you are printing an empty object.",
                None,
            )
        return "", "No print() statement in the action."

    return act


class _Journal:
    """Finished queries and their steps, a JSON line each, appended as each query ends."""

    def __init__(self, folder: Path):
        folder.mkdir(parents=True, exist_ok=True)
        self.runs, self.steps = folder / "queries.jsonl", folder / "steps.jsonl"
        self.lock = threading.Lock()

    def add(self, run: Run) -> None:
        record = asdict(run)
        trace = record.pop("trace")
        with self.lock:
            with self.steps.open("a", encoding="utf-8") as out:  # steps first: a query
                for step in trace:  # line means its steps are all there
                    out.write(json.dumps(step, ensure_ascii=False) + "\n")
            with self.runs.open("a", encoding="utf-8") as out:
                out.write(json.dumps(record, ensure_ascii=False) + "\n")

    def _lines(self, path: Path) -> list[dict]:
        if not path.exists():
            return []
        found = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                found.append(json.loads(line))
            except ValueError:
                continue  # the tail of a killed write: that query runs again
        return found

    def finished(self) -> set[tuple[str, int]]:
        return {(r["query_id"], r["sample"]) for r in self._lines(self.runs)}

    def read(self) -> tuple[list[dict], list[dict]]:
        runs = {(r["query_id"], r["sample"]): r for r in self._lines(self.runs)}
        steps = {}
        for s in self._lines(self.steps):  # a resumed query's steps replace the killed ones'
            if (s["query_id"], s["sample"]) in runs:
                steps[s["query_id"], s["sample"], s["step"]] = s
        return sorted(runs.values(), key=_order), sorted(steps.values(), key=_order)


def _order(record: dict) -> tuple:
    return record["query_id"], record["sample"], record.get("step", 0)


_STEPS = pa.schema(
    [
        ("query_id", pa.string()), ("sample", pa.int32()), ("step", pa.int32()),
        ("thought", pa.string()), ("tool", pa.string()), ("arguments", pa.string()),
        ("observation", pa.string()), ("observation_chars", pa.int64()), ("state", pa.string()),
        ("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()),
        ("latency_s", pa.float64()), ("action_s", pa.float64()), ("cached", pa.bool_()),
        ("error", pa.string()), ("prompt_version", pa.string()),
    ]
)  # fmt: skip
_QUERIES = pa.schema(
    [
        ("query_id", pa.string()), ("sample", pa.int32()), ("end_state", pa.string()),
        ("steps", pa.int32()), ("answer", pa.string()), ("final_text", pa.string()),
        ("extracted", pa.bool_()), ("prompt_tokens", pa.int64()),
        ("completion_tokens", pa.int64()), ("seconds", pa.float64()), ("error", pa.string()),
        ("prompt_version", pa.string()),
    ]
)  # fmt: skip


def _write(out: Path, runs: list[dict], steps: list[dict], predictions: dict) -> None:
    version = prompts.PROMPT_VERSION
    rows = [
        {**r, "answer": json.dumps(r["answer"]) if r["answer"] is not None else None,
         "prompt_version": version}
        for r in runs
    ]  # fmt: skip
    write_parquet(pa.Table.from_pylist(rows, schema=_QUERIES), out / "queries.parquet")
    steps = [{**s, "prompt_version": version} for s in steps]
    write_parquet(pa.Table.from_pylist(steps, schema=_STEPS), out / "steps.parquet")
    lines = [json.dumps({"query_id": q, "prediction": p}) for q, p in sorted(predictions.items())]
    (out / "predictions.jsonl").write_text("".join(f"{line}\n" for line in lines), "utf-8")


def _consistency(queries, runs: list[dict], samples: int) -> dict:
    """MIRAI's Figure 4a over K samples: self-consistency (each code predicted by more than
    half the samples) and Max@K (each query's best sample by second-level F1)."""
    by_query: dict[str, list[dict]] = {}
    for r in runs:
        by_query.setdefault(r["query_id"], []).append(r["answer"] or {})
    voted, best = {}, {}
    for q in queries:
        answers = by_query.get(q.query_id, [])
        cleaned = (clean_prediction(a) for a in answers)  # the scorer's own reading
        counts = Counter(code for c in cleaned for code in c.first_level | c.second_level)
        vote: dict[str, list[str]] = {}
        for code in sorted(c for c, n in counts.items() if n * 2 > samples):
            vote.setdefault(code[:2], []).extend([code] if len(code) == 3 else [])
        voted[q.query_id] = vote
        scored = [(score_query(q.answer, a)["second_level"]["f1"], i)
                  for i, a in enumerate(answers)]  # fmt: skip
        best[q.query_id] = answers[max(scored)[1]] if scored else {}
    return {
        "self_consistency": evaluate.score(queries, voted),
        "max_at_k": evaluate.score(queries, best),
    }
