"""Sound questions in the demo release: rules 1-5 recomputed here from the release's own
files, with code of this test's own (not the build's or verify's), and each kind of breach
planted into a copy, which `release verify` must name."""

from __future__ import annotations

import calendar
import json
import re
import shutil
import string
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import snowballstemmer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from gdelt_forecast.contract.names import TASKS
from gdelt_forecast.release.verify import verify
from gdelt_forecast.tasks.records import SCHEMA
from tests.release.test_release import _relist, _rewrite

STEM = snowballstemmer.stemmer("english")


def words(text: str) -> set[str]:
    tokens = re.findall(r"\w+", text.lower())
    return set(STEM.stemWords([t for t in tokens if t not in ENGLISH_STOP_WORDS]))


def similar(a: str, b: str, threshold: float) -> bool:
    wa, wb = words(a), words(b)
    if not wa or not wb:
        return not wa and not wb and re.sub(r"\W+", "", a.lower()) == re.sub(r"\W+", "", b.lower())
    return len(wa & wb) / min(len(wa), len(wb)) >= threshold


def span(value: str) -> tuple[date, date]:
    parts = [int(p) for p in value.split("-")]
    if len(parts) == 3:
        return date(*parts), date(*parts)
    if len(parts) == 2:
        return date(*parts, 1), date(*parts, calendar.monthrange(*parts)[1])
    return date(parts[0], 1, 1), date(parts[0], 12, 31)


def records(root: Path) -> list[dict]:
    return [
        r
        for task in TASKS
        for path in sorted((root / "tasks" / task).glob("*.parquet"))
        for r in pq.read_table(path).to_pylist()
    ]


def breaches(root: Path) -> list[str]:
    """Every breach of rules 1-5 in the release at ``root``, recomputed from its files."""
    quality = json.loads((root / "stats" / "quality.json").read_text())
    threshold = quality["near_duplicate"]["threshold"]
    seen = {r["doc_id"]: r["date"] for r in pq.read_table(root / "news").to_pylist()}
    atoms = pq.read_table(root / "timelines" / "timelines.parquet").to_pylist()
    out = []
    for a in atoms:  # rule 2, and each source's date is the news table's
        if seen.get(a["source_doc_id"]) != a["source_date"]:
            out.append(f"2: {a['text']} has a source date not news'")
        if a["date"] and span(a["date"])[0] > a["source_date"]:
            out.append(f"2: {a['text']} is dated after its source")
    story: dict[str, list[str]] = {}
    for a in atoms:
        story.setdefault(a["complex_event_id"], []).append(a["text"])
    rows = records(root)
    for r in rows:
        cut, back, target = r["cut_date"], r["background"], r["target"]
        for e in back:  # rule 1
            if seen[e["source_doc_id"]] > cut or span(e["date"])[1] > cut:
                out.append(f"1: {r['id']} shows {e['text']}")
        for e in target:
            if seen[e["source_doc_id"]] <= cut or span(e["date"])[0] <= cut:
                out.append(f"1: {r['id']} asks for {e['text']}")
        for t in target:  # rule 4
            if any(similar(t["text"], b["text"], threshold) for b in back):
                out.append(f"4: {r['id']} shows its answer")
        options = r["candidates"]
        if r["task"] in ("MCNC", "MCAC") and any(
            similar(a, b, threshold) for i, a in enumerate(options) for b in options[i + 1 :]
        ):
            out.append(f"4: {r['id']} has near-duplicate options")
        negatives = []
        if r["task"] == "MCNC":
            negatives = [c for i, c in enumerate(options) if i != "ABCD".index(r["answer"])]
        elif r["task"] == "VQA" and r["answer"] == "no":
            negatives = options
        if any(similar(n, s, threshold) for n in negatives for s in story[r["complex_event_id"]]):
            out.append(f"4: {r['id']} has a true event as a negative")
    order = {"train": 0, "dev": 1, "test": 2}  # rule 5
    for r in rows:
        earlier = [
            b["text"]
            for o in rows
            if order[o["split"]] < order[r["split"]]
            for b in o["background"]
        ]
        if any(similar(t["text"], b, threshold) for t in r["target"] for b in earlier):
            out.append(f"5: {r['id']} answers an earlier split's background")
    return out


def test_the_demo_release_breaks_no_rule(release):
    rows = records(release)
    assert {r["split"] for r in rows} == {"train", "dev", "test"}
    assert breaches(release) == [] and verify(release) == []


def test_quality_and_the_cards_soundness_section(release):
    quality = json.loads((release / "stats" / "quality.json").read_text())
    rows = records(release)
    assert [r["rule"] for r in quality["rules"]] == [
        "1-provenance",
        "2-not-after-source",
        "3-one-event-once",
        "4-no-answer-in-context",
        "5-across-splits",
        "6-grounded",
        "7-generated-grounded",
    ]
    assert quality["grounding"] == {"rule": "grounding-v1", "threshold": 0.6}
    assert quality["near_duplicate"] == {"measure": "token-containment-v1", "threshold": 0.7}
    for task in ("MCNC", "MCAC"):
        letters = Counter(r["answer"] for r in rows if r["task"] == task)
        assert quality["gold_letters"][task] == {k: letters[k] for k in "ABCD"}
        assert max(letters.values()) - min(letters[k] for k in "ABCD") <= 1  # spread evenly
    for task in TASKS:
        sizes = [len(r["background"]) for r in rows if r["task"] == task]
        shown = quality["backgrounds"][task]
        assert (shown["records"], shown["empty"], shown["single_event"]) == (
            len(sizes),
            sizes.count(0),
            sizes.count(1),
        )
    removed = {r["rule"]: r["removed"] for r in quality["rules"]}
    counts = [n for found in removed.values() for k, n in found.items() if k != "by_reason"]
    assert sum(counts) > 0
    card = (release / "README.md").read_text()
    assert "## Soundness" in card and "token-containment-v1" in card
    manifest = json.loads((release / "manifest.json").read_text())
    # The demo's timelines are extractive: rule 6 asks nothing of them.
    assert removed["6-grounded"] == {"atomic_events": 0, "arguments": 0, "by_reason": {}}
    assert manifest["timelines"]["ungrounded"] == {}
    assert manifest["tasks"]["soundness"] == {k: v for k, v in removed.items() if k[0] in "1457"}
    assert manifest["timelines"]["dropped"] == {
        k: v["atomic_events"] for k, v in removed.items() if k[0] in "236"
    }


@pytest.fixture
def copy(release, tmp_path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(release, out)
    return out


def _task_file(root: Path, rows: list[dict]) -> tuple[str, list[dict]]:
    path = next(
        f"tasks/{t}/{s}.parquet"
        for t in ("MCNC",)
        for s in ("test", "dev", "train")
        if pq.read_metadata(root / f"tasks/{t}/{s}.parquet").num_rows
    )
    return path, pq.read_table(root / path).to_pylist()


def test_verify_names_a_background_from_a_page_seen_after_the_cut(copy):
    path, rows = _task_file(copy, records(copy))
    row = rows[0]
    later = next(
        a
        for a in pq.read_table(copy / "timelines/timelines.parquet").to_pylist()
        if a["source_date"] > row["cut_date"]
    )
    planted = {
        "date": row["cut_date"].isoformat(),
        "text": "A lead sentence of a later page",
        "source_doc_id": later["source_doc_id"],
        "source_date": later["source_date"],
    }
    rows[0] = {**row, "background": [*row["background"], planted]}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    assert breaches(copy) == [f"1: {row['id']} shows A lead sentence of a later page"]
    assert verify(copy) == [
        f"{path}: {row['id']}: background event 'A lead sentence of a later page' comes "
        f"from a document first seen on {later['source_date']}, cut {row['cut_date']}"
    ]


def test_verify_names_a_source_date_that_is_not_the_day_gdelt_saw_it(copy):
    path, rows = _task_file(copy, records(copy))
    event = rows[0]["background"][0]
    moved = {**event, "source_date": event["source_date"] - timedelta(days=1)}
    rows[0] = {**rows[0], "background": [moved, *rows[0]["background"][1:]]}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    assert verify(copy) == [
        f"{path}: {rows[0]['id']}: background event's source {event['source_doc_id']} was "
        f"first seen on {event['source_date']}, not {moved['source_date']}"
    ]


def test_verify_names_an_atomic_event_after_its_source(copy):
    path = "timelines/timelines.parquet"
    table = pq.read_table(copy / path)
    atoms = table.to_pylist()
    i = next(i for i, a in enumerate(atoms) if a["source_date"] < date(2025, 8, 31))
    plan = (atoms[i]["source_date"] + timedelta(days=1)).isoformat()
    atoms[i] = {**atoms[i], "date": plan}
    _rewrite(copy, path, pa.Table.from_pylist(atoms, table.schema))
    assert f"2: {atoms[i]['text']} is dated after its source" in breaches(copy)
    assert (
        f"{path}: {atoms[i]['complex_event_id']} event {atoms[i]['seq']}: dated {plan}, "
        f"after its source was first seen on {atoms[i]['source_date']} (rule 2)"
    ) in verify(copy)


def test_verify_names_model_written_events_their_documents_do_not_say(copy):
    """Rule 6: four atomic events turned into a model's (method llm), each with its source's
    text where the model wrote one: the page's own title on its first-seen day stands; the
    prompt's header read back, an invented event and a date the page never states are named."""
    path = "timelines/timelines.parquet"
    table = pq.read_table(copy / path)
    atoms = table.to_pylist()
    news = {r["doc_id"]: r for r in pq.read_table(copy / "news").to_pylist()}
    written = {
        "method": "llm",
        "model": "a-model",
        "prompt_version": "openforecast-v1",
        **dict.fromkeys(("subject", "event_type", "object", "location")),
    }
    planted = []
    for i, (when, text) in enumerate(
        [
            ("seen", "title"),
            ("seen", "The News release time: {seen}"),
            ("seen", "Martians landed near a crater and met the Pope"),
            ("1999-01-02", "title"),
            ("seen", "title"),  # its subject, below, is the model's invention
        ]
    ):
        atom = atoms[i]
        seen = atom["source_date"].isoformat()
        title = news[atom["source_doc_id"]]["title"]
        text = title if text == "title" else text.format(seen=seen)
        atoms[i] = {**atom, **written, "date": seen if when == "seen" else when, "text": text}
        planted.append(atoms[i])
    atoms[4] = planted[4] = {**planted[4], "subject": "The Martian Empire"}
    _rewrite(copy, path, pa.Table.from_pylist(atoms, table.schema))
    where = [f"{path}: {a['complex_event_id']} event {a['seq']}" for a in planted]
    problems = verify(copy)
    # The task records that showed those events' old texts now show no atomic event.
    assert all("is no atomic event of the timelines" in p for p in problems if "tasks/" in p)
    assert [p for p in problems if p.startswith(path)] == [
        f"{where[1]}: echoes-prompt (rule 6): {planted[1]['date']}: {planted[1]['text']!r}",
        f"{where[2]}: text-not-in-document (rule 6): {planted[2]['date']}: {planted[2]['text']!r}",
        f"{where[3]}: date-not-in-document (rule 6): 1999-01-02: {planted[3]['text'][:80]!r}",
        f"{where[4]}: its subject not in its source {planted[4]['source_doc_id']} (rule 6)",
    ]
    atoms[0] = {**planted[0], "prompt_version": "openforecast-v0"}
    _rewrite(copy, path, pa.Table.from_pylist(atoms, table.schema))
    assert verify(copy)[0] == (
        f"{where[0]}: prompt version 'openforecast-v0' is not one of this code's, so rule 6 "
        "cannot be checked"
    )


def test_verify_names_an_event_called_extractive_its_document_does_not_say(copy):
    """Where a model wrote the timelines, the documents no model event cites give their
    extractive events (timelines.fill_extractive): a model's event relabelled extractive
    must not pass. The demo's own extractive events stand in their documents."""
    manifest_path = copy / "manifest.json"
    meta = json.loads(manifest_path.read_text())
    meta["timelines"]["method"] = "llm"
    manifest_path.write_text(json.dumps(meta))
    assert verify(copy) == []  # every extractive event is its document's words and dates
    path = "timelines/timelines.parquet"
    table = pq.read_table(copy / path)
    atoms = table.to_pylist()
    told = "Martians landed near a crater and met the Pope"
    atoms[0] = {**atoms[0], "text": told}  # still labelled extractive
    _rewrite(copy, path, pa.Table.from_pylist(atoms, table.schema))
    where = f"{path}: {atoms[0]['complex_event_id']} event {atoms[0]['seq']}"
    assert f"{where}: text-not-in-document (rule 6): {atoms[0]['date']}: {told!r}" in verify(copy)


def test_verify_names_a_generated_question_or_answer_its_target_does_not_say(copy):
    """Rule 7: an AQA record made a model's (method llm). Its target's text less one word as
    the question and that word as the answer stand; an invented answer, and a question that
    holds its answer, are named."""
    path = next(
        f"tasks/AQA/{s}.parquet"
        for s in ("test", "dev", "train")
        if pq.read_metadata(copy / f"tasks/AQA/{s}.parquet").num_rows
    )
    rows = pq.read_table(copy / path).to_pylist()
    text = rows[0]["target"][0]["text"]
    word = max(re.findall(r"[A-Za-z]{4,}", text), key=len)
    written = {"method": "llm", "model": "a-model", "prompt_version": "openforecast-tasks-v1"}
    for question, answer, why in [
        (text.replace(word, "..."), word, None),
        (text.replace(word, "..."), "Atlantis", "its answer 'Atlantis' is not in its target event: "
         "text-not-in-document (rule 7)"),
        (text, word, f"its question {text[:60]!r} gives its answer away (rule 7)"),
    ]:  # fmt: skip
        rows[0] = {**rows[0], **written, "question": question, "answer": answer}
        _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
        # (openforecast/ holds the record as it was: named once the task files are sound)
        found = [p for p in verify(copy) if not p.startswith("openforecast/")]
        assert found == ([f"{path}: {rows[0]['id']}: {why}"] if why else [])
    rows[0] = {**rows[0], "prompt_version": "openforecast-tasks-v0"}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    assert verify(copy) == [
        f"{path}: {rows[0]['id']}: prompt version 'openforecast-tasks-v0' is not one of this "
        "code's, so rule 7 cannot be checked"
    ]


def test_verify_names_an_answer_in_its_own_context_and_twin_options(copy):
    path, rows = _task_file(copy, records(copy))
    row = rows[0]
    gold = "ABCD".index(row["answer"])
    twin = list(row["candidates"])
    twin[(gold + 1) % 4] = row["candidates"][gold] + " again"
    rows[0] = {**row, "candidates": twin}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    problems = verify(copy)
    assert len(problems) == 1 and problems[0].startswith(f"{path}: {row['id']}: ")
    assert "near-duplicates" in problems[0]
    # The answer reworded into the background, dated and sourced as a sound background
    # event (so that rules 1 and 2 hold): only rule 4 is broken.
    known = row["background"][0]
    shown = {**known, "text": "Reports say: " + row["target"][0]["text"]}
    rows[0] = {**row, "background": [*row["background"], shown]}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    assert f"4: {row['id']} shows its answer" in breaches(copy)
    answer = row["target"][0]["text"][:60]
    assert verify(copy) == [
        f"{path}: {row['id']}: answer {answer!r} is in its background as {shown['text'][:60]!r}"
    ]


def test_verify_names_a_negative_that_is_a_true_event(copy):
    path, rows = _task_file(copy, records(copy))
    row = rows[0]
    story = [
        a["text"]
        for a in pq.read_table(copy / "timelines/timelines.parquet").to_pylist()
        if a["complex_event_id"] == row["complex_event_id"]
    ]
    wrong = next(i for i in range(4) if i != "ABCD".index(row["answer"]))
    true = next(
        t
        for t in story
        if t != row["target"][0]["text"] and not any(similar(t, c, 0.7) for c in row["candidates"])
    )
    candidates = list(row["candidates"])
    candidates[wrong] = true
    rows[0] = {**row, "candidates": candidates}
    _rewrite(copy, path, pa.Table.from_pylist(rows, SCHEMA))
    assert f"4: {row['id']} has a true event as a negative" in breaches(copy)
    assert any(p.startswith(f"{path}: {row['id']}: negative ") for p in verify(copy))


def test_verify_names_an_answer_in_an_earlier_splits_background(copy):
    rows = records(copy)
    test = next(r for r in rows if r["split"] == "test" and r["task"] == "LTF")
    train_path = "tasks/LTF/train.parquet"
    train = pq.read_table(copy / train_path).to_pylist()
    assert train
    reworded = {**test["target"][0], "text": "Breaking: " + test["target"][0]["text"]}
    # Dated and sourced soundly for its own cut, so that only rule 5 is broken (and, as the
    # planted event is no atomic event of the timelines, the train record says so).
    planted = {
        **reworded,
        "date": train[0]["background"][0]["date"],
        "source_doc_id": train[0]["background"][0]["source_doc_id"],
        "source_date": train[0]["background"][0]["source_date"],
    }
    train[0] = {**train[0], "background": [*train[0]["background"], planted]}
    _rewrite(copy, train_path, pa.Table.from_pylist(train, SCHEMA))
    assert f"5: {test['id']} answers an earlier split's background" in breaches(copy)
    problems = verify(copy)
    assert (
        f"tasks/LTF/test.parquet: {test['id']}: answer {test['target'][0]['text'][:60]!r} is "
        "an earlier split's background" in "\n".join(problems)
    )
    no_atom = f"{train_path}: {train[0]['id']}: its event {planted['text'][:60]!r} is no atomic"
    assert all("earlier split" in p or p.startswith(no_atom) for p in problems), problems


def test_the_gold_letter_of_each_option_list_is_its_answer(release):
    for r in records(release):
        if r["task"] in ("MCNC", "MCAC"):
            assert r["answer"] in string.ascii_uppercase[:4] and len(r["candidates"]) == 4


KG, NEWS = "mirai/MIRAI/data_kg.csv", "mirai/MIRAI/data_news.csv"


def _plant(root: Path, path: str, lines: list[str]) -> None:
    (root / path).write_text("\n".join(lines) + "\n", encoding="utf-8")
    _relist(root, path)


def test_verify_names_a_mirai_database_line_from_outside_the_release(copy):
    """MIRAI's API cuts data_kg.csv and data_news.csv by date alone: a line that is none of
    the release's rows (an event of a later day, a page seen after the history) or a quad's
    list that names documents not its own would reach an agent."""
    assert verify(copy) == []
    kg = (copy / KG).read_text(encoding="utf-8").splitlines()
    one = next(line for line in kg[1:] if line.endswith(f"['{line.split(chr(9))[9]}']"))
    day = one.split("\t")[0]
    later = one.replace(day, "2025-09-01")  # the same quad and page, a day after the history
    _plant(copy, KG, [*kg, later])
    head, relation, tail, doc = (later.split("\t")[i] for i in (1, 3, 2, 9))
    assert verify(copy) == [
        f"{KG}: a line that is no (quad, document) of quad_docs (1 rows, e.g. 2025-09-01 "
        f"{head} {relation} {tail} {doc})"
    ]

    # The quad's list names a page that is not among its documents.
    other = next(line.split("\t")[9] for line in kg[1:] if line.split("\t")[9] != doc)
    padded = one.rsplit("\t", 1)[0] + f"\t['{doc}', '{other}']"
    _plant(copy, KG, [padded if line == one else line for line in kg])
    assert verify(copy) == [
        f"{KG}: a quad whose Docids is not the list of its documents (1 rows, e.g. "
        f"{one.split(chr(9))[7]})"
    ]
    _plant(copy, KG, kg)

    news = (copy / NEWS).read_text(encoding="utf-8").splitlines()
    page = "\t".join(["later0000000000000", "0" * 32, "https://example.org/later", "2025-09-03",
                      "A page seen after the history", "Its text.", "Its text."])  # fmt: skip
    _plant(copy, NEWS, [*news, page])
    assert verify(copy) == [
        f"{NEWS}: a line that is no article of news on its first-seen day (1 rows, e.g. "
        "later0000000000000 2025-09-03)"
    ]
