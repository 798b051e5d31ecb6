"""The tables of a release: where their Parquet files lie and what they hold.

The card's ``configs:`` (one Hugging Face config per table), the Croissant record sets and
``release verify`` all read this one list, so they cannot disagree about the layout.
"""

from __future__ import annotations

from dataclasses import dataclass

from gdelt_forecast.contract.names import REASONING, SPLITS, TASKS


@dataclass(frozen=True)
class Table:
    name: str  # Croissant RecordSet id, and the Hugging Face config unless ``config`` is set
    glob: str  # Parquet files, relative to the release folder
    description: str
    split: str = "train"  # the Hugging Face split it loads as
    config: str | None = None  # tables sharing a config are its splits

    @property
    def config_name(self) -> str:
        return self.config or self.name


_TASKS = {  # OpenForecast's six tasks (gdelt_forecast/tasks/records.py), one config each
    "STF": "Short-term forecasting: the events of one day after the cut.",
    "LTF": "Long-term forecasting: every event after the cut.",
    "AQA": "Argument-level QA: one argument (subject, object, event type, location, time) "
    "of an event after the cut.",
    "MCNC": "Multi-choice narrative cloze: the event that follows, among four.",
    "MCAC": "Multi-choice argument cloze: an AQA question with four options.",
    "VQA": "Verify QA: will this event (the true one or a negative) occur?",
}

_REASONING = {  # EV2's four task families (gdelt_forecast/reasoning/records.py)
    "I-CEC": "Instance-level contextual event classification (EV2): which of four events "
    "stands in the asked relation to the queried one, given the story's graph of earlier "
    "events; the answer from a document first seen after the cut.",
    "I-CRR": "Instance-level contextual relation reasoning (EV2): the relation between two "
    "of a story's events, among three.",
    "S-CEC": "Schema-level CEC (EV2): the same over event types (CAMEO relation names), "
    "where the month relates the two types one way only.",
    "S-CRR": "Schema-level CRR (EV2): the relation between two event types.",
}


TABLES: tuple[Table, ...] = (
    Table("events", "events/*.parquet", "GDELT event records kept by the MIRAI rules, one row "
          "per record, with the codebook columns and the quad they belong to."),
    Table("quads", "quads/*.parquet", "One row per quadruple (date, head, relation, tail): "
          "daily mentions, GDELT records, events, source URLs and kept documents behind it."),
    Table("news", "news/*.parquet", "Kept news articles: extracted title, text, MIRAI's "
          "abstract and the OBELICS filter values."),
    Table("news_terms", "news_terms/*.parquet", "Each news article's terms, as MIRAI's BM25 "
          "search splits `title + ' ' + text` (on single spaces): one row per article and "
          "term with its count (`tf`), its first position (`first`, 0-based) and the "
          "article's number of terms (`tokens`); the index behind the agent environment's "
          "text search and keyword matching."),
    Table("quad_docs", "quad_docs/*.parquet", "Links from each quad to the kept documents "
          "behind its source URLs."),
    Table("funnel", "funnel/*.parquet", "Per day and rule: rows in, rows out, rows removed "
          "and the most frequent reasons."),
    Table("relations", "reference/relations.parquet", "CAMEO event codes (levels 1-3) with "
          "MIRAI's names, descriptions, parent links and binary/quad classes."),
    Table("countries", "reference/countries.parquet", "ISO-3166 alpha-3 countries (plus "
          "Kosovo, XKX) with name, continent and UN region."),
    Table("queries", "testset/queries.parquet", "The month's relation queries (t, s, ?, o), "
          "one row per forecasting horizon, with MIRAI's prompt and the answer.", "test"),
    Table("subset", "testset/subset.parquet", "The seeded balanced subset of the queries.",
          "test"),
    Table("complex_events", "timelines/complex_events.parquet", "The month's complex events: "
          "stories between two countries, with their documents in date order."),
    Table("timelines", "timelines/timelines.parquet", "Each complex event's timeline of "
          "atomic events (date, text, subject, event type, object, location, source "
          "document and `source_date`, the day GDELT first saw it), with the method, model "
          "and prompt version that wrote it."),
    Table("gdelt_slots", "gdelt/slots.parquet", "Every GDELT source file of the release's "
          "days: slot, table, URL, size, md5, status, rows and rejected lines."),
    *(Table(f"{task}-{split}", f"tasks/{task}/{split}.parquet", f"{_TASKS[task]} The "
            f"`{split}` split: records whose cut date falls in it.", split, task)
      for task in TASKS for split in SPLITS),
    *(Table(task, f"reasoning/{task}/*.parquet", _REASONING[task], "test")
      for task in REASONING),
)  # fmt: skip
