"""Text from outside, mended where it enters (gdelt_forecast/ground/wellformed.py): any text comes
out writable and printable; every character the module names gets its one treatment; and
mended text goes through every writer the project has and reads back the same."""

from __future__ import annotations

import json
import unicodedata

import pyarrow as pa
import pytest
from hypothesis import given

from gdelt_forecast.agents.react import Run, Step
from gdelt_forecast.agents.run import _Journal, _write
from gdelt_forecast.ground.config import ConfigError, load_config
from gdelt_forecast.ground.files import write_json
from gdelt_forecast.ground.parquet_io import read_rows, write_parquet
from gdelt_forecast.ground.wellformed import mended, printable, unwritable, wellformed
from gdelt_forecast.llm.cache import AnswerCache
from gdelt_forecast.llm.request import Result
from gdelt_forecast.release import card
from tests.fuzz.strategies import TEXT
from tests.llm.scripted import request

pytestmark = pytest.mark.fuzz

# Each kind the module names, with what it becomes in "a{c}b".
TREATED = [
    ("\ud800", "a\ufffdb"),  # a lone high surrogate
    ("\udfff", "a\ufffdb"),  # a lone low one
    ("\x00", "a\ufffdb"),
    ("\x01", "a\ufffdb"),
    ("\x1b", "a\ufffdb"),
    ("\x7f", "a\ufffdb"),
    ("\x85", "a\ufffdb"),  # C1
    ("\ufeff", "a\ufffdb"),  # a BOM past the start: unpaired
    ("\t", "a\tb"),
    ("\n", "a\nb"),
    ("\r", "a\rb"),
]
CHARS = [c for c, _ in TREATED]


@pytest.mark.parametrize(("char", "want"), TREATED)
def test_each_kind_gets_its_one_treatment(char, want):
    assert wellformed(f"a{char}b", "test") == want
    assert wellformed(f"\ufeffa{char}b", "test") == want  # a leading BOM is dropped


def test_a_mended_text_is_counted_by_its_boundary():
    before = mended().get("counted here", 0)
    wellformed("fine", "counted here")
    wellformed("\ud800", "counted here")
    assert mended()["counted here"] == before + 1


@given(TEXT)
def test_any_text_comes_out_writable_once_and_for_all(text):
    out = wellformed(text, "test")
    out.encode("utf-8")
    assert unwritable(out) is None and wellformed(out, "test") == out
    assert len(out) in (len(text), len(text) - 1)  # replaced one for one, a leading BOM gone


@given(TEXT)
def test_any_text_prints_without_a_control_character(text):
    shown = printable(text)
    shown.encode("utf-8")
    assert not [c for c in shown if unicodedata.category(c) in ("Cc", "Cs") and c not in "\t\n"]


def test_a_config_value_no_record_can_hold_is_refused():
    with pytest.raises(ConfigError, match=r"llm.model: holds '\\udcff' at character 1"):
        load_config(None, ["llm.model=a\udcffb"])  # a byte of argv that is not UTF-8
    with pytest.raises(ConfigError, match=r"site.title\\x1b: holds '\\x1b'"):
        load_config(None, ["site.title\x1b=x"])


TEXT_OF = {c: wellformed(f"a{c}b{c}", "test") for c in CHARS}


@pytest.mark.parametrize("char", CHARS)
def test_mended_text_goes_through_every_writer_and_reads_back(char, tmp_path):
    text = TEXT_OF[char]
    # the answer cache
    cache = AnswerCache(tmp_path / "cache")
    result = Result(hash="ab" * 32, key=text, step="s", model="m", status="ok",
                    answer={"events": [text]}, raw=text)  # fmt: skip
    cache.put(result)
    back = cache.get(result.hash, request("p", key=text))
    assert (back.answer, back.raw) == ({"events": [text]}, text)
    # the agents' journal and traces
    journal = _Journal(tmp_path / "journal")
    run = Run("q", 0, end_state="Final Answer", final_text=text, answer={"01": [text]})
    run.trace = [Step("q", 0, 1, thought=text, arguments=text, observation=text, error=text)]
    journal.add(run)
    runs, steps = journal.read()
    assert runs[0]["final_text"] == text and steps[0]["thought"] == text
    _write(tmp_path / "run", runs, steps, {"q": {"01": [text]}})
    assert read_rows(tmp_path / "run" / "steps.parquet")[0]["observation"] == text
    line = (tmp_path / "run" / "predictions.jsonl").read_text(encoding="utf-8")
    assert json.loads(line)["prediction"] == {"01": [text]}
    # a Parquet table and a JSON record
    write_parquet(pa.Table.from_pylist([{"title": text}]), tmp_path / "t.parquet")
    assert read_rows(tmp_path / "t.parquet") == [{"title": text}]
    write_json(tmp_path / "r.json", {"text": text})
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8")) == {"text": text}
    # the card's part that quotes a model's dropped events
    shown = card._model_built(_model_built_section(text))
    assert repr(text[:120]) in shown and shown.encode("utf-8")


def _model_built_section(text: str) -> dict:
    calls = {"calls": 1, "ok": 1, "fallback": 0, "failed": 0, "retried": 0,
             "failed_by_reason": {}, "prompt_tokens": 1, "completion_tokens": 1}  # fmt: skip
    shown = {"grounded": [{"text": text, "reason": "not in its document"}]}
    part = {"unit": "events", "prompt_versions": ["v1"], "calls": calls, "proposed": 1,
            "kept": 0, "dropped": {"grounded": 1}, "examples": shown}  # fmt: skip
    model = {"model": "m", "weights_sha256": None, "server": None}
    return {"parts": {"timelines": part}, "model": model}


def test_the_site_shows_a_mended_text(tmp_path):
    """The site's pages are built by the agent test that answers with hostile text
    (tests/agents/test_hostile.py); here, its JSON data file takes every kind too."""
    from gdelt_forecast.site.render import Pages

    texts = list(TEXT_OF.values())
    Pages(tmp_path).data("hostile.js", texts)
    written = (tmp_path / "hostile.js").read_text(encoding="ascii")
    assert json.loads(written.removeprefix("window.SITE_DATA = ").rstrip(";\n")) == texts


def test_what_an_extraction_worker_mended_is_counted_in_the_caller():
    from gdelt_forecast.articles.extract import extract

    before = mended()
    body = b"<p>" + b"Words of a paragraph long enough to be the text. " * 20 + b"\x00</p>"
    page = extract(b"<html><head><title>A\x01title</title></head><body>" + body + b"</body>")
    assert page.title == "A\ufffdtitle" and page.text.endswith("\ufffd")
    assert mended(since=before) == {"page": 1}
