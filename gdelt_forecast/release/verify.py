"""``gdelt-forecast release verify <dir>``: is a release what its manifest and card say?

Checks, each naming the file at fault: every listed file is present with its size and sha256
and no file is unlisted; each table's row count matches the manifest; each table's Parquet
schema is the card's features; and the leakage rule: queries and subset rows are dated in
the test month with a cutoff before their date, the subset is drawn from the queries, no
table of the database and no complex event holds a row dated outside the release's history
(which ends on the test month's last day), no atomic event is dated after it or after its
source document was first seen (soundness rule 2), every model-written atomic event and its
arguments stand in its source's title and text (rule 6), every event a task or reasoning
record shows is an atomic event of the timelines (so rules 2 and 6 hold for it), and every
task record keeps the soundness rules 1, 4, 5 and 7 (``gdelt_forecast.contract.leakage``:
provenance against ``news``' dates, no answer in its own context, none in an earlier split's
backgrounds, a model's question and answer only what its target event says), each in its
task's and split's file. ``news_terms`` holds every article of ``news`` and no other, each
with one first term, its date, and term counts that add up to its text's length. ``tkg/``
decodes, line by line as RE-GCN reads it, to exactly the rows of ``quads``, each in the
split its date says, with ids from 0 without gaps. ``openforecast/`` holds exactly the lines
the checked task files give (so its ``known_timeline`` are their backgrounds). MIRAI's
``data_news.csv`` holds one line per article of ``news`` on its first-seen day and
``data_kg.csv`` one per (quad, document) of ``quad_docs``, each with its quad's whole
document list, and nothing else: MIRAI's API cuts them by date alone. A release lists them
under ``built`` (``release mirai`` makes them from its Parquet): verify checks the ones built
into the folder, or builds them itself, and holds them to the manifest's sha256 too.
"""

from __future__ import annotations

import fnmatch
import json
from collections import Counter
from contextlib import contextmanager
from datetime import date, timedelta
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from gdelt_forecast.contract import grounding, leakage, sound
from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.contract.names import EXTRACTIVE, LLM, MANIFEST, REASONING
from gdelt_forecast.contract.reasoning import cameo_types, unsound
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.dates import month_range
from gdelt_forecast.ground.files import parquet_rows, sha256
from gdelt_forecast.pipeline.stages import STAGES
from gdelt_forecast.release import card, mirai_database, openforecast
from gdelt_forecast.release.manifest import on_disk

DATED = {  # table -> the date columns that must lie in the history
    "events": ("date",), "quads": ("date",), "news": ("date",), "news_terms": ("date",),
    "quad_docs": ("date",), "funnel": ("date",), "complex_events": ("first_date", "last_date"),
}  # fmt: skip


def verify(root: Path) -> list[str]:
    """Every problem found, one line each; empty when the release is sound."""
    try:
        manifest = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        listed = {item["path"]: item for item in manifest["files"]}
        built = {item["path"] for item in manifest.get("built", [])}
        if built and built != set(mirai_database.FILES.values()):  # read, so checked first
            raise ValueError(f"its built files {sorted(built)!r:.200} are not MIRAI's two")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"{MANIFEST}: unreadable ({exc})"]
    problems = _files(root, listed, built)
    if problems:  # tables that fail their checksum are not worth reading further
        return problems
    problems += _schemas(root, listed)
    if problems:
        return problems
    problems = (
        _leakage(root, manifest, listed)
        + _task_leakage(root, listed, manifest.get("timelines", {}).get("method") == "llm")
        + _reasoning(root, listed)
        + _tkg(root, manifest)
    )
    # openforecast/ is compared with task files that passed their own checks: a breach in
    # those is named there, once.
    return problems or _openforecast(root, manifest)


def _files(root: Path, listed: dict[str, dict], built: set[str]) -> list[str]:
    """Each listed file against its entry, and every file on disk listed (or one that
    ``release mirai`` builds: its bytes are checked with MIRAI's database)."""
    problems = []
    present = {p.relative_to(root).as_posix() for p in on_disk(root)} - built
    for path, item in listed.items():
        if path not in present:
            problems.append(f"{path}: listed in the manifest but missing")
        elif (root / path).stat().st_size != item["bytes"]:
            problems.append(
                f"{path}: {(root / path).stat().st_size} bytes, manifest says {item['bytes']}"
            )
        elif sha256(root / path) != item["sha256"]:
            problems.append(f"{path}: sha256 differs from the manifest")
        elif "rows" in item and parquet_rows(root / path) != item["rows"]:
            problems.append(
                f"{path}: {parquet_rows(root / path)} rows, manifest says {item['rows']}"
            )
    problems += [f"{path}: not listed in the manifest" for path in sorted(present - set(listed))]
    return problems


def _tables(listed: dict[str, dict]) -> dict[str, list[str]]:
    return {t.name: sorted(p for p in listed if fnmatch.fnmatchcase(p, t.glob)) for t in TABLES}


def _schemas(root: Path, listed: dict[str, dict]) -> list[str]:
    try:
        info = card.parse_header((root / "README.md").read_text(encoding="utf-8"))
        declared = {c["config_name"]: c["features"] for c in info["dataset_info"]}
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [f"README.md: no readable dataset_info in the card header ({exc})"]
    problems = []
    configs = {t.name: t.config_name for t in TABLES}
    for name, paths in _tables(listed).items():
        if not paths:
            problems.append(f"{name}: the release has no file for this table")
        for path in paths:
            features = card.hf_features(pq.read_schema(root / path))
            if features != declared.get(configs[name]):
                problems.append(
                    f"{path}: schema differs from the card's `{configs[name]}` features"
                )
    return problems


def _leakage(root: Path, manifest: dict, listed: dict[str, dict]) -> list[str]:
    first, last = month_range(manifest["month"])
    start = date.fromisoformat(manifest["history"]["start"])
    end = date.fromisoformat(manifest["history"]["end"])
    problems = []
    if end != last:
        problems.append(f"{MANIFEST}: history ends {end}, not on the test month's last day {last}")
    tables = _tables(listed)
    with duckdb.connect() as con:
        for name, paths in tables.items():
            con.execute(
                f'CREATE VIEW "{name}" AS SELECT * FROM read_parquet('
                f"{duck.quoted_list(root / p for p in paths)})"
            )
        for name, columns in DATED.items():
            where = " OR ".join(f"{c} NOT BETWEEN $start AND $end" for c in columns)
            (outside,) = con.execute(
                f"SELECT count(*) FROM {name} WHERE {where}", {"start": start, "end": end}
            ).fetchone()
            if outside:
                problems.append(
                    f"{_named(name, tables[name])}: {outside} rows dated outside {start}..{end}"
                )
        # Atomic events are dated yyyy, yyyy-MM or yyyy-MM-dd: as text, any of them after the
        # history's last day sorts after it.
        (late,) = con.execute(
            "SELECT count(*) FROM timelines WHERE date > ?", [end.isoformat()]
        ).fetchone()
        if late:
            where = _named("timelines", tables["timelines"])
            problems.append(f"{where}: {late} atomic events dated after {end}")
        found = duck.records(con, "release/leaks.sql", first=first, last=last)
        found += duck.records(con, "release/news_terms_check.sql")
        with _mirai_database(root, manifest, listed) as (folder, differ):
            problems += differ
            if folder is not None:
                for name, path in mirai_database.FILES.items():
                    con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM {_tsv(folder / path)}')
                    tables[name] = [path]
                found += duck.records(con, "release/mirai_check.sql")
        for r in found:
            problems.append(
                f"{_named(r['tbl'], tables[r['tbl']])}: {r['problem']} ({r['rows']} rows, e.g. "
                f"{r['example']})"
            )
    return problems


def _named(table: str, paths: list[str]) -> str:
    """Where a problem of a whole table lies: its file, or its files' glob where it has several
    (a history's table has a file a month)."""
    if len(paths) == 1:
        return paths[0]
    glob = next(t.glob for t in TABLES if t.name == table)
    return f"{glob} ({len(paths)} files)"


@contextmanager
def _mirai_database(root: Path, manifest: dict, listed: dict[str, dict]):
    """The folder under which MIRAI's database files lie, and their bytes' differences from
    the manifest: built (``release mirai``) for a release that lists them as built, shipped
    for one of before; ``None`` for a release of before MIRAI's database was released."""
    if "built" in manifest:
        with mirai_database.built(root, manifest) as found:
            yield found
    elif all(path in listed for path in mirai_database.FILES.values()):
        yield root, []
    else:
        yield None, []


def _tsv(path: Path) -> str:
    """A MIRAI tab-separated file as text columns (its articles' texts span lines, quoted)."""
    return (
        f"read_csv({duck.literal(path)}, delim = '\\t', header = true, quote = '\"', "
        "escape = '\"', all_varchar = true, max_line_size = 67108864)"
    )


def _task_leakage(root: Path, listed: dict[str, dict], written_timelines: bool) -> list[str]:
    """The soundness rules from the release's own tables (:mod:`gdelt_forecast.contract.leakage`,
    :mod:`gdelt_forecast.contract.sound`): rule 2 on the timelines, rules 1, 4 and 5 (and the
    dates) on every task record, each record in its task's and split's file."""
    tables = _tables(listed)
    news = pq.read_table(root / "news", columns=["doc_id", "date"]).to_pylist()
    available = {r["doc_id"]: r["date"] for r in news}
    problems, story, atomic = [], {}, {}
    for path in tables["timelines"]:
        atoms = pq.read_table(root / path).to_pylist()
        problems += _grounding(root, path, atoms, written_timelines)
        atomic.update((_key(a), a) for a in atoms)
        for atom in atoms:
            story.setdefault(atom["complex_event_id"], []).append(atom["text"])
            where = f"{path}: {atom['complex_event_id']} event {atom['seq']}"
            if available.get(atom["source_doc_id"]) != atom["source_date"]:
                problems.append(
                    f"{where}: its source {atom['source_doc_id']} was first seen "
                    f"on {available.get(atom['source_doc_id'])}, not "
                    f"{atom['source_date']}"
                )
            elif sound.after_source(atom):
                problems.append(
                    f"{where}: dated {atom['date']}, after its source was first "
                    f"seen on {atom['source_date']} (rule 2)"
                )
    rows = []
    for table in TABLES:
        if table.config is None:
            continue
        for path in tables[table.name]:
            for row in pq.read_table(root / path).to_pylist():
                rows.append(row)
                if (row["task"], row["split"]) != (table.config, table.split):
                    problems.append(f"{path}: {row['id']} is a {row['task']} {row['split']} record")
                texts = story.get(row["complex_event_id"], [])
                why = (
                    leakage.dated_wrong(row)
                    or leakage.unsourced(row, available)
                    or leakage.answer_in_context(row, texts)
                    or _not_atomic(row["background"] + row["target"], atomic)
                    or _generated(row, atomic)
                )
                if why:
                    problems.append(f"{path}: {row['id']}: {why}")
    paths = {r["id"]: f"tasks/{r['task']}/{r['split']}.parquet" for r in rows}
    problems += [f"{paths[i]}: {i}: {why}" for i, why in sorted(leakage.leaked(rows).items())]
    return problems


def _generated(row: dict, atomic: dict[tuple, dict]) -> str | None:
    """Rule 7 on a record whose question and answer a model wrote."""
    if row["method"] != LLM or row["task"] not in ("AQA", "MCAC"):
        return None
    try:
        scaffold = STAGES["tasks"].prompt_words(row["prompt_version"])
    except ValueError as exc:
        return f"{exc}, so rule 7 cannot be checked"
    return leakage.generated_unsaid(row, atomic[_key(row["target"][0])], scaffold)


def _grounding(root: Path, path: str, atoms: list[dict], written_timelines: bool) -> list[str]:
    """Rule 6 on every model-written atomic event, against its source's title and text in
    ``news`` and the prompts of the version that wrote it. Where a model wrote the timelines,
    the events that say they are extractive (from the documents no model event cites) are
    held to their documents' words and dates too, with no prompt: a model's event could
    otherwise pass under that name. Their arguments are GDELT's coding, not the text's."""
    written_atoms = [a for a in atoms if a["method"] != EXTRACTIVE or written_timelines]
    ids = sorted({a["source_doc_id"] for a in written_atoms})
    if not ids:
        return []
    news = pq.read_table(
        root / "news", columns=["doc_id", "date", "title", "text"], filters=[("doc_id", "in", ids)]
    )
    documents = {
        r["doc_id"]: grounding.Document(r["title"], r["text"], r["date"]) for r in news.to_pylist()
    }
    problems = []
    timelines = STAGES["timelines"]
    for atom in written_atoms:
        where = f"{path}: {atom['complex_event_id']} event {atom['seq']}"
        extracted = atom["method"] == EXTRACTIVE
        try:
            scaffold = frozenset() if extracted else timelines.prompt_words(atom["prompt_version"])
        except ValueError as exc:
            problems.append(f"{where}: {exc}, so rule 6 cannot be checked")
            continue
        document = documents.get(atom["source_doc_id"])
        if document is None:
            problems.append(f"{where}: its source {atom['source_doc_id']} is not in news")
        elif why := grounding.ungrounded(atom, document, scaffold):
            problems.append(
                f"{where}: {why} (rule 6): {atom['date'] or 'undated'}: {atom['text'][:80]!r}"
            )
        elif not extracted and (unsaid := grounding.unsaid_arguments(atom, document, scaffold)):
            problems.append(
                f"{where}: its {', '.join(unsaid)} not in its source {atom['source_doc_id']} "
                "(rule 6)"
            )
    return problems


def _key(event: dict) -> tuple:
    """An event as a record shows it: each must be an atomic event of the timelines (where
    rules 2 and 6 are checked), not a text of its own."""
    return event["text"], event["source_doc_id"], event["date"], event["source_date"]


def _not_atomic(events: list[dict], atoms: dict[tuple, dict]) -> str | None:
    for event in events:
        if _key(event) not in atoms:
            return f"its event {event['text'][:60]!r} is no atomic event of the timelines"
    return None


def _reasoning(root: Path, listed: dict[str, dict]) -> list[str]:
    """Every reasoning record's events atomic events of the timelines, dated by their
    sources' first sight, and its rules (:func:`gdelt_forecast.contract.reasoning.unsound`)
    kept."""
    tables = _tables(listed)
    atomic = {
        _key(a): a for path in tables["timelines"] for a in pq.read_table(root / path).to_pylist()
    }
    news = pq.read_table(root / "news", columns=["doc_id", "date"]).to_pylist()
    available = {r["doc_id"]: r["date"] for r in news}
    types = cameo_types(pq.read_table(root / "reference" / "relations.parquet"))
    problems = []
    for task in REASONING:
        for path in tables[task]:
            for row in pq.read_table(root / path).to_pylist():
                wrong = [e for e in row["events"]
                         if available.get(e["source_doc_id"]) != e["source_date"]]  # fmt: skip
                if row["task"] != task:
                    why = f"a {row['task']} record"

                elif wrong:
                    why = (f"{wrong[0]['event_id']}'s source {wrong[0]['source_doc_id']} was "
                           f"first seen on {available.get(wrong[0]['source_doc_id'])}")  # fmt: skip
                else:
                    why = unsound(row, types) or _not_atomic(row["events"], atomic)
                if why:
                    problems.append(f"{path}: {row['id']}: {why}")
    return problems


def _openforecast(root: Path, manifest: dict) -> list[str]:
    """``openforecast/`` holds exactly the lines the release's checked task files give, so
    a model shown its ``known_timeline`` sees only what the task records' backgrounds hold."""
    if "openforecast" not in manifest:  # a release from before openforecast/
        return []
    expected, summary = openforecast.lines(root)
    problems = []
    if summary != manifest["openforecast"]:
        problems.append(f"{MANIFEST}: openforecast differs from what the task files give")
    folder = root / openforecast.FOLDER
    present = {p.stem for p in folder.glob("*.json")} if folder.exists() else set()
    for split in sorted(present - set(expected)):
        problems.append(f"{openforecast.FOLDER}/{split}.json: no task records of {split}")
    for split, rows in expected.items():
        path = f"{openforecast.FOLDER}/{split}.json"
        if split not in present:
            problems.append(f"{path}: missing")
            continue
        found = (root / path).read_text(encoding="utf-8").splitlines()
        if len(found) != len(rows):
            problems.append(f"{path}: {len(found)} lines, the task files give {len(rows)}")
        for number, (line, row) in enumerate(zip(found, rows, strict=False), 1):
            if line != row:
                ce = json.loads(row)["complex_event_id"]
                problems.append(f"{path}: line {number} ({ce}) is not what the task files give")
    return problems


def _tkg(root: Path, manifest: dict) -> list[str]:
    if "tkg" not in manifest:  # a release from before tkg/
        return []
    folder = root / "tkg"
    try:
        names = {kind: _ids(folder / f"{kind}2id.txt") for kind in ("entity", "relation")}
        stat = (folder / "stat.txt").read_text(encoding="utf-8").split()
        lines = {
            split: [
                tuple(int(v) for v in line.split("\t"))
                for line in (folder / f"{split}.txt").read_text().splitlines()
            ]
            for split in ("train", "valid", "test")
        }
    except (OSError, ValueError) as exc:
        return [f"tkg/: unreadable ({exc})"]
    problems = []
    for kind, ids in names.items():
        if sorted(ids) != list(range(len(ids))):
            problems.append(f"tkg/{kind}2id.txt: ids are not 0..{len(ids) - 1} without gaps")
    if stat != [str(len(names["entity"])), str(len(names["relation"]))]:
        problems.append(
            f"tkg/stat.txt: {stat}, the lists hold {len(names['entity'])} "
            f"entities and {len(names['relation'])} relations"
        )
    start = date.fromisoformat(manifest["history"]["start"])
    first, _ = month_range(manifest["month"])
    valid_from = first - timedelta(days=manifest["config"]["release"]["tkg_valid_days"])
    decoded: Counter = Counter()
    for split, rows in lines.items():
        for s, r, o, t, _ in rows:
            day = start + timedelta(days=t)
            where = "test" if day >= first else "valid" if day >= valid_from else "train"
            if where != split:
                problems.append(f"tkg/{split}.txt: a quad of {day} belongs in {where}.txt")
                break
            try:
                decoded[(day, names["entity"][s], names["relation"][r], names["entity"][o])] += 1
            except KeyError:
                problems.append(f"tkg/{split}.txt: ids {s} {r} {o} are not in the lists")
                break
    table = pq.read_table(root / "quads", columns=["date", "head", "relation", "tail"])
    quads = Counter(tuple(row.values()) for row in table.to_pylist())
    if decoded != quads:
        problems.append(
            f"tkg/: {sum((quads - decoded).values())} quads of quads/ have no "
            f"line, {sum((decoded - quads).values())} lines match no quad"
        )
    return problems


def _ids(path: Path) -> dict[int, str]:
    """``name<TAB>id`` lines as RE-GCN's ``_read_dictionary`` reads them: id -> name."""
    pairs = [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines()]
    return {int(i): name for name, i in pairs}
