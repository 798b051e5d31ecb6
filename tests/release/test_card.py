"""The card's branches that the demo release does not reach (an empty table, OpenForecast items
left out, a remote embedding model, a model-built part with examples), rendered from the demo
release's own files with its metadata changed."""

from __future__ import annotations

import json

from gdelt_forecast.release import card
from gdelt_forecast.release.build import _schemas
from tests.release.test_release import manifest, table_rows


def _inputs(release) -> tuple[dict, dict, dict, dict]:
    meta = manifest(release)
    meta["license"] = meta["config"]["release"]["license"]  # the build's, not the manifest's
    meta["quality"] = json.loads((release / "stats" / "quality.json").read_text())
    stats = {
        "events": 1234, "quads": 107, "days": 31, "pairs": 12, "relations_level2": 20,
        "documents": 13, "first_day": "2025-08-01", "last_day": "2025-08-31", "funnel": [],
        "plots": ["plots/daily.png"],
    }  # fmt: skip
    return meta, _schemas(release), table_rows(release), stats


def test_the_demo_card_has_the_local_models_note_and_nothing_empty(release):
    text = (release / "README.md").read_text()
    assert "`all-MiniLM-L6-v2-onnx-int8` is sentence-transformers' all-MiniLM-L6-v2" in text
    assert "Empty in this release" not in text and "Left out of these files" not in text
    assert text.endswith("they are included for research use only.\n")
    # Built long after 2025-09, it names no live round (tests/rounds/test_schedule.py has one
    # built on its refresh's day).
    assert manifest(release)["round"] is None
    assert "No live round was opened with this release: it was built after the month" in text


def test_what_the_demo_has_none_of_is_said(release):
    meta, schemas, rows, stats = _inputs(release)
    rows["news"] = 0
    meta["openforecast"] |= {"splits": {}, "left_out": {"MCNC without a VQA": 1234, "VQA": 0}}
    meta["embeddings"]["embedding_model"] = "text-embedding-3-small"
    meta["reasoning"]["left_out"] = dict.fromkeys(meta["reasoning"]["left_out"], 0)
    meta["baselines"] = {}
    text = card.render(meta, schemas, rows, stats)
    assert "\nEmpty in this release: `news`. They have no `datasets` config" in text
    assert "news" not in {c["config_name"] for c in card.parse_header(text)["configs"]}
    assert "read `openforecast/<split>.json` (no split has records):" in text
    assert (
        "too. Left out of these files (not of `tasks/`), as their shape cannot hold them: "
        "1,234 MCNC without a VQA.\n"
    ) in text
    assert "sentence-transformers' all-MiniLM-L6-v2" not in text
    assert "Left out while building:\nnothing." in text
    assert "| history |" not in text and "|---|---|---|---|---|---|---|---|---|---|\n" in text


def test_model_built_examples_of_every_part_are_under_one_heading():
    calls = {
        "calls": 2, "ok": 1, "fallback": 0, "failed": 1, "retried": 0,
        "failed_by_reason": {"bad json": 1}, "prompt_tokens": 10, "completion_tokens": 5,
    }  # fmt: skip

    def part(examples: dict) -> dict:
        return {"unit": "events", "prompt_versions": [], "calls": calls, "proposed": 1,
                "kept": 1, "dropped": {}, "examples": examples}  # fmt: skip

    text = card._model_built({
        "model": {"model": "m", "weights_sha256": None, "server": None},
        "parts": {
            "timelines": part({"6-grounded": [{"text": "a", "reason": "not in its document"}]}),
            "tasks": part({"3-one-event-once": []}),
            "reasoning": part({"4-no-answer": [{"text": "b", "reason": "repeats"}]}),
        },
    })  # fmt: skip
    assert text.startswith("Model `m`, weights sha256 `not stated`, served by a server not stated")
    assert "| tasks: events | - | 2 (1, 0, 1 (1 bad json), 0) | 10 / 5 | 1 | 1 | none |" in text
    assert text.endswith(
        "|\n\nDropped, a few of each rule, with why:\n\n"
        "- timelines, `6-grounded`: 'a': not in its document\n"
        "- reasoning, `4-no-answer`: 'b': repeats"
    )
