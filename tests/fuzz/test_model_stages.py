"""Every stage that sends a model's text on, against a server that answers anything: the
timelines (``timelines.method: llm``), the tasks' generated parts (``llm``), the reasoning's
judged relations (``reasoning.method: llm``) and MIRAI's Direct IO baseline
(:mod:`gdelt_forecast.baselines.direct`).

The demo month is built once for the module; each example copies its data root, so that
its answer cache starts empty and its outputs are its own, and runs one stage through the
runner against a scripted server whose answers the example chose: any text, any JSON, an
error, or JSON that fits the request's answer model (built from the JSON schema the request
sends, its strings drawn from hostile text). The stage must finish; every call is kept or
counted as failed by reason; its Parquet files, its record's JSON and the answer cache read
back as UTF-8. A full stage run takes a second or more, so examples are few (``STAGE``).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import shutil
import tempfile
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gdelt_forecast.contract.names import QUERIES
from gdelt_forecast.ground.config import load_config
from gdelt_forecast.ground.data_root import DataRoot
from gdelt_forecast.llm.cache import AnswerCache
from gdelt_forecast.llm.client import REASONS
from gdelt_forecast.pipeline.runner import run
from tests.fuzz.strategies import HOSTILE, JSON, LONG_TEXT, TEXT, nested
from tests.llm.scripted import MODEL, ScriptedServer, completion, raw
from tests.release.conftest import MONTH, REPO, demo_month

pytestmark = pytest.mark.fuzz

# A stage run takes a second or so: 5 examples in the ci profile (25 / 5), 40 in the fuzz
# profile's passes (each pass `make fuzz` repeats with a new seed).
STAGE = settings(max_examples=min(settings.default.max_examples // 5, 40))


@pytest.fixture(scope="module")
def demo(tmp_path_factory, demo_built) -> Path:
    """The demo month's data root (warehouse, test set, extractive timelines), built once."""
    base = tmp_path_factory.mktemp("stages")
    return demo_month(demo_built, base / "data", base / "mirror").data_root


# --- answers --------------------------------------------------------------------------------


def instance(schema: dict, rng: random.Random, texts: list[str], root: dict | None = None):
    """A JSON value valid against ``schema`` (the subset pydantic's answer models use), its
    strings drawn from ``texts`` and cut to their ``maxLength``."""
    root = root or schema
    if "$ref" in schema:
        return instance(root["$defs"][schema["$ref"].rsplit("/", 1)[1]], rng, texts, root)
    if "anyOf" in schema:
        return instance(rng.choice(schema["anyOf"]), rng, texts, root)
    if "enum" in schema:
        return rng.choice(schema["enum"])
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "string":
        return rng.choice(texts)[: schema.get("maxLength", 200)]
    if kind == "integer":
        low = schema.get("minimum", -1_000)
        return rng.randint(low, schema.get("maximum", low + 1_000))
    if kind == "number":
        return rng.uniform(-1e6, 1e6)
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "null":
        return None
    if kind == "array":
        low = schema.get("minItems", 0)
        items = schema.get("items", {})
        # An adjustment's order (n numbers of 1..n): a permutation, half the time.
        order = items.get("type") == "integer" and items.get("maximum") == low
        if order and schema.get("maxItems") == low and rng.random() < 0.5:
            return rng.sample(range(1, low + 1), low)
        n = rng.randint(low, min(schema.get("maxItems", low + 4), low + 4))
        return [instance(schema.get("items", {}), rng, texts, root) for _ in range(n)]
    if kind == "object":
        value = {k: instance(s, rng, texts, root) for k, s in schema.get("properties", {}).items()}
        more = schema.get("additionalProperties", False)
        if more is not False:
            room = min(schema.get("maxProperties", len(value) + 3) - len(value), 3)
            for key in rng.sample(texts, min(room, len(texts))):
                if key not in value:
                    value[key] = instance(more if isinstance(more, dict) else {}, rng, texts, root)
        return value
    return rng.choice(texts)  # a schema that allows anything


# What the server answers a request with, chosen by a hash of the request so that the same
# request gets the same answer whatever order a batch sends them in.
PLAN = st.one_of(
    st.tuples(st.just("fits"), st.booleans()),  # JSON of the answer model; escaped or raw
    st.tuples(st.just("fits"), st.booleans()),  # (twice: most answers should fit)
    st.tuples(st.just("text"), LONG_TEXT),
    st.tuples(st.just("json"), JSON),
    st.tuples(st.just("error"), st.sampled_from([400, 500])),
)
PLANS = st.lists(PLAN, min_size=1, max_size=4)
# Dates a model may write that the yyyy-MM-dd pattern takes: impossible days, the calendar's
# ends, digits of another script (\d takes them).
DATES = ["2025-02-31", "0000", "0001-01-01", "9999-12-31", "\u0662\u0660\u0662\u0665-08-07"]
TEXTS = st.lists(TEXT, min_size=1, max_size=6).map(lambda found: [*found, *HOSTILE[:3]])


class Player:
    """The scripted server's answers for one example: ``plans`` by request, the strings of
    fitting answers from ``texts``, drawn with ``seed``."""

    def __init__(self, plans: list, texts: list[str], seed: int):
        self.plans, self.texts, self.seed = plans, texts, seed

    def __call__(self, body: dict) -> dict:
        asked = json.dumps([body["messages"], body.get("response_format")], sort_keys=True)
        digest = hashlib.sha256(asked.encode("utf-8", "surrogatepass")).hexdigest()
        kind, arg = self.plans[int(digest, 16) % len(self.plans)]
        if kind == "error":
            return raw(json.dumps({"error": {"message": self.texts[0]}}), status=arg)
        if kind == "text":
            content = arg
        elif kind == "json":
            content = json.dumps(arg)
        else:
            schema = body["response_format"]["json_schema"]["schema"]
            rng = random.Random(f"{self.seed}:{digest}")
            texts = [*self.texts, *self.quoted(body["messages"][-1]["content"], rng)]
            content = json.dumps(instance(schema, rng, texts), ensure_ascii=arg)
        return raw(json.dumps(completion(content)))

    def quoted(self, prompt: str, rng: random.Random) -> list[str]:
        """Lines of the prompt, some with a hostile text inside: what a model quotes from its
        document stands in it (the grounding rules keep it), so the hostile text goes on."""
        lines = [line for line in prompt.splitlines() if line.strip()]
        picked = rng.sample(lines, min(4, len(lines)))
        picked += re.findall(r"\d{4}-\d{2}-\d{2}", prompt)[:3] + DATES  # its dates, and odd ones
        for n, line in enumerate(picked[:2]):
            at = rng.randint(0, min(len(line), 40))  # within what maxLength keeps
            picked[n] = line[:at] + rng.choice(self.texts) + line[at:]
        return picked


ANSWERS = {"plans": PLANS, "texts": TEXTS, "seed": st.integers(0, 2**32)}


# --- checks ---------------------------------------------------------------------------------


def fresh_root(demo: Path, folder: str) -> Path:
    root = Path(folder) / "data"
    shutil.copytree(demo, root, ignore=shutil.ignore_patterns("*.lock", "locks"))
    return root


def config(root: Path, server: ScriptedServer, *overrides: str):
    settings_ = [
        f"llm.base_url={server.url}",
        f"llm.model={MODEL}",
        "llm.timeout_s=10",
        "llm.backoff_s=0",
        "llm.max_retries=0",
        "llm.invalid_retries=1",
        "llm.max_concurrency=4",
        *overrides,
    ]
    return load_config(REPO / "configs/demo.yaml", settings_, root)


def settled(root: Path, calls: Path, llm: dict) -> None:
    """Each call kept or failed by reason, as the summary counts them; each kept answer's
    cache file UTF-8 JSON that the cache reads back."""
    rows = pq.read_table(calls).to_pylist()
    assert llm["calls"] == len(rows)
    for row in rows:
        assert row["status"] in ("ok", "fallback", "failed")
        if row["status"] == "failed":
            assert row["reason"] in REASONS
            continue
        path = AnswerCache(DataRoot(root).llm_cache).path(row["hash"])
        stored = json.loads(path.read_text(encoding="utf-8"))
        assert stored["status"] == row["status"] and stored["answer"] is not None
    assert set(llm["failed_by_reason"]) <= set(REASONS)
    assert sum(llm["failed_by_reason"].values()) == llm["failed"]
    assert llm["ok"] + llm["fallback"] + llm["failed"] == llm["calls"]


def read_back(folder: Path) -> None:
    """Every Parquet file of ``folder`` reads, every JSON file is UTF-8 JSON."""
    for path in folder.rglob("*.parquet"):
        pq.read_table(path).to_pylist()
    for path in folder.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


def played(server: ScriptedServer, player: Player):
    server.player = player
    return _Unplay(server)


class _Unplay:
    def __init__(self, server):
        self.server = server

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.player = None


# --- the stages -----------------------------------------------------------------------------


@STAGE
@given(**ANSWERS)
@example(plans=[("fits", False)], texts=list(HOSTILE), seed=0)
@example(plans=[("fits", True)], texts=list(HOSTILE), seed=1)
# JSON nested past the parser's recursion limit: parse_answer let RecursionError out of the
# client, and the stage died (llm/answer.py now counts it as invalid JSON).
@example(plans=[("text", nested(100_000))], texts=["a"], seed=0)
def test_llm_timelines_finish_and_read_back(demo, server, plans, texts, seed):
    with tempfile.TemporaryDirectory() as folder, played(server, Player(plans, texts, seed)):
        root = fresh_root(demo, folder)
        summary = run("timelines", config(root, server, "timelines.method=llm"), MONTH)
        out = DataRoot(root).month("timelines", MONTH)
        settled(root, out / "llm_calls.parquet", summary.llm)
        read_back(out)
        atoms = pq.read_table(out / "timelines.parquet").to_pylist()
        assert len(atoms) == summary.atomic_events


def after_model_timelines(demo, server, player, stage: str, file_of, *overrides: str) -> None:
    """``stage`` over the timelines the same model wrote, so its text goes on into the
    stage's records: every call settled, every output read back, each record counted in
    its file (``file_of(task)``)."""
    with tempfile.TemporaryDirectory() as folder, played(server, player):
        root = fresh_root(demo, folder)
        cfg = config(root, server, "timelines.method=llm", *overrides)
        run("timelines", cfg, MONTH)
        summary = run(stage, cfg, MONTH)
        out = DataRoot(root).month(stage, MONTH)
        settled(root, out / "llm_calls.parquet", summary.llm)
        read_back(out)
        assert sum(summary.records.values()) == sum(
            pq.read_table(out / file_of(task)).num_rows for task in summary.records
        )


@STAGE
@given(**ANSWERS)
@example(plans=[("fits", False)], texts=list(HOSTILE), seed=0)
def test_llm_tasks_finish_and_read_back(demo, server, plans, texts, seed):
    after_model_timelines(demo, server, Player(plans, texts, seed), "tasks", str)


@STAGE
@given(**ANSWERS)
@example(plans=[("fits", False)], texts=list(HOSTILE), seed=0)
def test_llm_reasoning_finishes_and_reads_back(demo, server, plans, texts, seed):
    """Its relations judged by the model too."""
    after_model_timelines(
        demo, server, Player(plans, texts, seed), "reasoning", lambda task: f"{task}.parquet",
        "reasoning.method=llm", "reasoning.judged_pairs=4", "reasoning.min_context=1",
    )  # fmt: skip


@STAGE
@given(**ANSWERS)
@example(plans=[("fits", False)], texts=list(HOSTILE), seed=0)
@example(plans=[("fits", True)], texts=["\ud800", "01", "010"], seed=0)
# The same past the JSON answer: Direct IO's fallback (evaluate.parse_prediction) reads the
# text as JSON again, and its RecursionError killed the stage (llm/answer.py's fall_back
# now turns it into the fallback's failure).
@example(plans=[("text", nested(100_000))], texts=["a"], seed=0)
def test_direct_io_finishes_and_reads_back(demo, server, plans, texts, seed):
    with tempfile.TemporaryDirectory() as folder, played(server, Player(plans, texts, seed)):
        root = fresh_root(demo, folder)
        release = Path(folder) / "2025.08.0"
        (release / "testset").mkdir(parents=True)
        queries = DataRoot(root).month("testset", MONTH) / "queries.parquet"
        shutil.copy(queries, release / QUERIES["test"])
        summary = run("baseline", config(root, server), release, "llm", "test")
        settled(root, DataRoot(root).baselines / release.name / "llm_calls.parquet", summary.llm)
        read_back(DataRoot(root).baselines)
        read_back(DataRoot(root).agents)
        json.loads(json.dumps(summary.to_dict(), ensure_ascii=False).encode("utf-8"))
