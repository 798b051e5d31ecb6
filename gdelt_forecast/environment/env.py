"""MIRAI's agent API over a release, with a cutoff no call can cross.

:func:`open_environment` opens one DuckDB connection on the release's Parquet with the
cutoff written into what it defines, once: the tables ``events`` (MIRAI's events: date,
head, relation and tail of each quad with a kept document) and ``links`` (the same columns
and a document id, one row per quad and document), and the views ``news`` and ``terms``
(the articles' terms, ``news_terms``), all of rows dated before the cutoff; every method
reads those alone (plus what it makes from them: ``docs``, the articles' ids, dates, titles
and lengths, at first use, and ``corpus``, a text search's documents). No argument reaches
past them (a date range that runs past the cutoff is clamped to the day before it) and the
cutoff is fixed when the environment opens. Only the small event index is held in memory (a
few MB for a month's 60,000 quads, so every call is a query of milliseconds); text search
ranks by the stored term counts (:mod:`gdelt_forecast.environment.bm25`), keywords match
terms, and texts are read from Parquet only when ``browse_news_article`` asks for one (the
whole day's, kept for the day's next articles) or a keyword holds a space.

Python hides nothing from a caller who digs: the guarantee is the API's (its methods, their
arguments, the ``cutoff`` property, which cannot be set), not a sandbox around the private
connection, which could read the release's files directly.

The methods answer as MIRAI's ``api_implementation.py`` does on the release's ``mirai/``
folder, with these differences on purpose:

- MIRAI's ``DEFAULT_END_DATE`` is a module global any call may change or forget; here the
  cutoff is the query date and the last visible day the one before it (MIRAI's
  ``DEFAULT_END_DATE`` = cutoff - 1 day). A date after that is not an error, as in MIRAI,
  but sees nothing.
- Ties keep an order of their own: events and articles of one date by their codes and ids,
  distributions by code (MIRAI's pandas sort leaves ties in an unstable order).
- ``get_events`` with ``text_description`` returns its events in the order it found them
  (MIRAI's returns a set as a list); the list is the same set.
- ``keywords`` are matched as text, case-insensitively (MIRAI joins them into a regular
  expression, so "U.S." also matches "UAS").
- ``map_country_name_to_iso`` of an alternative name returns the country under its first
  name (MIRAI's raises ValueError, its Country check wanting the first name), and no call
  extends the caller's list of relations (MIRAI's add the children of first-level codes
  to it).
"""

from __future__ import annotations

import json
from datetime import date, timedelta
from functools import lru_cache
from pathlib import Path

import duckdb
import numpy as np

from gdelt_forecast.environment import bm25
from gdelt_forecast.environment.types import (
    CAMEOCode,
    Country,
    Date,
    DateRange,
    Event,
    ISOCode,
    Relation,
)
from gdelt_forecast.ground import duck
from gdelt_forecast.ground.errors import StageError

EVENTS_LIMIT, NEWS_LIMIT, MATCHES = 30, 15, 5  # MIRAI's list lengths
# The days whose texts browse_news_article keeps: an agent reads several articles of the few
# days its searches found, and a month's texts are a fraction of what MIRAI holds (all of them).
DAYS_KEPT = 31
ROLES = ("head", "tail", "both")


class EnvironmentSetupError(StageError):
    """A release that cannot back an environment (missing tables, unreadable info)."""


class Environment:
    """MIRAI's functions as methods; see the module docstring for the cutoff."""

    __slots__ = (
        "_cutoff",
        "_con",
        "_iso2names",
        "_code2relation",
        "_name2iso",
        "_text2code",
        "_relations",
        "_children",
        "_country_vectors",
        "_relation_vectors",
        "_embed",
        "_made",
        "_texts",
    )

    def __init__(self, folder: Path, cutoff: date, embed, since: date | None = None):
        """``since``: the first day shown (every day before the cutoff by default), a
        narrower view that loads less, for a caller that reads recent days alone."""
        self._cutoff = cutoff
        info = folder / "mirai" / "info"
        try:
            self._iso2names = json.loads((info / "dict_iso2alternames_GeoNames.json").read_text())
            self._code2relation = json.loads((info / "dict_code2relation.json").read_text())
            self._country_vectors = _unit(np.load(info / "country_embeddings.npy"))
            self._relation_vectors = _unit(np.load(info / "relation_embeddings.npy"))
        except OSError as exc:
            raise EnvironmentSetupError(
                f"{folder} has no readable mirai/info ({exc.filename})"
            ) from None
        if not any((folder / "news_terms").glob("*.parquet")):
            raise EnvironmentSetupError(
                f"{folder} has no news_terms/ (releases have it since "
                "the text index): rebuild the release"
            )
        self._name2iso = {n: iso for iso, names in self._iso2names.items() for n in names}
        self._text2code = {}
        for code, rel in self._code2relation.items():
            self._text2code[rel["Name"]] = code
            self._text2code[rel["Description"]] = code
        # Frozen values, so every call can hand out the same ones.
        self._relations = {
            code: Relation(CAMEOCode(code), rel["Name"], rel["Description"])
            for code, rel in self._code2relation.items()
        }
        self._children: dict[str, list[Relation]] = {}
        for code, relation in self._relations.items():
            if len(code) == 3:
                self._children.setdefault(code[:2], []).append(relation)
        self._embed = embed
        self._made: set[str] = set()  # in-memory tables made at first use
        self._texts = lru_cache(maxsize=DAYS_KEPT)(self._day_texts)
        # Releases are immutable: a footer read once serves every later point read.
        self._con = duckdb.connect()
        self._con.execute("SET parquet_metadata_cache = true")
        before = f"date < DATE '{cutoff.isoformat()}'"
        if since is not None:
            before += f" AND date >= DATE '{since.isoformat()}'"
        read = {
            name: f"read_parquet({duck.literal(folder / name / '*.parquet')})"
            for name in ("quads", "quad_docs", "news", "news_terms")
        }
        # MIRAI's events are its data_kg.csv's: the quads that have a kept document.
        self._con.execute(
            f"CREATE TABLE events AS SELECT date, head, relation, tail, quad_id FROM "
            f"{read['quads']} WHERE {before} AND quad_id IN "
            f"(SELECT quad_id FROM {read['quad_docs']} WHERE {before})"
        )
        # Codes as ENUMs, which compare as integers: every filter on them takes half the
        # time it takes on strings. Sorted, so they order as the strings do, and holding every
        # code a caller may pass (the info lists) and every code the events use.
        for kind, listed, columns in (
            ("iso", self._iso2names, ("head", "tail")),
            ("cameo", self._code2relation, ("relation",)),
        ):
            used = {
                code
                for c in columns
                for (code,) in self._con.execute(f"SELECT DISTINCT {c} FROM events").fetchall()
            }
            values = ", ".join(duck.literal(code) for code in sorted(used | set(listed)))
            self._con.execute(f"CREATE TYPE {kind} AS ENUM ({values})")
            for column in columns:
                self._con.execute(f"ALTER TABLE events ALTER {column} TYPE {kind}")
        # Each (event, document) pair with the event's columns, so that a news call filters
        # it as ``events`` is filtered instead of joining the two (a year holds a million
        # pairs). The files, a month each, are read in order: the table is in month order and
        # a call's range skips the other months' row groups (sorting it would cost 80 MB).
        self._con.execute(
            "CREATE TABLE links AS SELECT l.date, e.head, e.relation, e.tail, l.doc_id FROM "
            f"(SELECT * FROM {read['quad_docs']} WHERE {before}) AS l JOIN events AS e "
            "USING (quad_id)"
        )
        self._con.execute("ALTER TABLE events DROP quad_id")
        self._con.execute(f"CREATE VIEW news AS SELECT * FROM {read['news']} WHERE {before}")
        self._con.execute(f"CREATE VIEW terms AS SELECT * FROM {read['news_terms']} WHERE {before}")

    @property
    def cutoff(self) -> date:
        """The query date: every row the environment shows is dated before it."""
        return self._cutoff

    def __setattr__(self, name, value):
        if hasattr(self, "_con"):  # set once, in __init__
            raise AttributeError("an environment's cutoff and data are fixed when it opens")
        object.__setattr__(self, name, value)

    def close(self) -> None:
        self._con.close()

    def interrupt(self) -> None:
        """Stop the query running now (from another thread: a call past its deadline)."""
        self._con.interrupt()

    def __enter__(self) -> Environment:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- checks and filters -------------------------------------------------------------

    def _range(self, date_range: DateRange | None) -> tuple[str, str]:
        if date_range is not None and not isinstance(date_range, DateRange):
            raise ValueError(
                f"Input 'date_range' must be a DateRange object, but received "
                f"type {type(date_range)}"
            )
        last = (self._cutoff - timedelta(days=1)).isoformat()
        start = date_range.start_date.date if date_range and date_range.start_date else "0001-01-01"
        end = date_range.end_date.date if date_range and date_range.end_date else last
        return start, min(end, last)  # clamped: nothing on or after the cutoff

    def _isos(self, values, what: str) -> list[str] | None:
        if not values:
            return None
        if not isinstance(values, list):
            raise ValueError(f"Input '{what}' must be a list, but received type {type(values)}")
        return [self._iso(v, f"Elements in '{what}'") for v in values]

    def _iso(self, value, what: str) -> str:
        if not isinstance(value, ISOCode):
            raise ValueError(f"{what} must be ISOCode objects, but received type {type(value)}")
        if value.code not in self._iso2names:
            raise ValueError(
                f"ISO code must be a valid ISO alpha-3 country code, but received: {value.code}"
            )
        return value.code

    def _codes(self, values, what: str) -> list[str] | None:
        """Second-level codes: a first-level code stands for itself and its children."""
        if not values:
            return None
        if not isinstance(values, list) or not all(isinstance(v, CAMEOCode) for v in values):
            raise ValueError(f"Input '{what}' must be a list of CAMEOCode objects")
        codes = set()
        for v in values:
            self._known(v)
            codes.add(v.code)
            if len(v.code) == 2:
                codes.update(r.cameo_code.code for r in self._children.get(v.code, ()))
        return sorted(codes)

    def _known(self, code: CAMEOCode) -> None:
        if not isinstance(code, CAMEOCode):
            raise ValueError(
                f"Input 'cameo_code' must be a CAMEOCode object, but received type {type(code)}"
            )
        if code.code not in self._code2relation:
            raise ValueError(
                "CAMEO code must be a valid CAMEO code defined in the 'Conflict "
                f"and Mediation Event Observations' Codebook, but received: "
                f"{code.code}"
            )

    def _events(
        self, date_range, heads=None, tails=None, relations=None, table="events"
    ) -> tuple[str, list]:
        """SQL for the matching events (one row per quad; per (quad, document) pair from
        ``links``) and its parameters."""
        start, end = self._range(date_range)
        sql, params = f"SELECT * FROM {table} WHERE date BETWEEN ? AND ?", [start, end]
        for column, values in (("head", heads), ("tail", tails), ("relation", relations)):
            if values and len(values) == 1:  # an equality DuckDB plans far faster than IN
                sql += f" AND {column} = ?"
                params.append(values[0])
            elif values:
                sql += f" AND {column} IN (SELECT unnest(?))"
                params.append(values)
        return sql, params

    def _filters(self, date_range, head_entities, tail_entities, relations, table="events"):
        return self._events(
            date_range,
            self._isos(head_entities, "head_entities"),
            self._isos(tail_entities, "tail_entities"),
            self._codes(relations, "relations"),
            table,
        )

    def _articles(self, links_sql: str, params: list, keywords) -> tuple[str, list]:
        """SQL for the kept documents of the matching ``links`` rows (``docs`` rows: doc_id,
        date, title, tokens) with at least one keyword in title or text, and its parameters."""
        sql = f"SELECT * FROM {self._docs()} WHERE doc_id IN (SELECT doc_id FROM ({links_sql}))"
        if not keywords:
            return sql, params
        if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
            raise ValueError("Input 'keywords' must be a list of strings")
        # A keyword without a space lies inside one term of a text, so the terms answer for
        # it; one with a space is looked for in the texts.
        spaced = [k for k in keywords if " " in k]
        plain = [k for k in keywords if " " not in k]
        found, found_params = [], []
        if plain:
            found.append(f"{_of_docs('terms', sql)} WHERE {_any_in('t.term', len(plain))}")
            found_params += [*params, *plain]
        if spaced:
            text = "coalesce(t.title, '') || ' ' || coalesce(t.text, '')"
            found.append(f"{_of_docs('news', sql)} WHERE {_any_in(text, len(spaced))}")
            found_params += [*params, *spaced]
        return (
            f"SELECT * FROM ({sql}) WHERE doc_id IN ({' UNION ALL '.join(found)})",
            [*params, *found_params],
        )

    def _docs(self) -> str:
        """The articles' ids, dates, titles and lengths in terms, in memory (a few MB), made
        at the first call that needs them: most environments (a baseline's) never do."""
        if "docs" not in self._made:  # a statement, even one that does nothing, costs 1 ms
            self._con.execute(
                "CREATE TABLE docs AS SELECT n.doc_id, n.date, n.title, t.tokens FROM news AS n "
                "LEFT JOIN (SELECT doc_id, tokens FROM terms WHERE first = 0) AS t USING (doc_id)"
            )
            self._made.add("docs")
        return "docs"

    def _ranked(self, docs_sql: str, params: list, text: str, limit: int) -> list[tuple]:
        """The ``limit`` documents of ``docs_sql`` that match ``text`` best, as MIRAI ranks
        them: BM25Okapi (:mod:`gdelt_forecast.environment.bm25`) over the documents in
        data_news.csv's order (date, doc_id), the top by numpy's argsort."""
        if not isinstance(text, str):
            raise ValueError("Input 'text_description' must be a string")
        # The corpus once, numbered in that order: the counts and the vocabulary below read it
        # instead of finding the documents again (a third of a search's time on a year).
        self._con.execute(
            "CREATE OR REPLACE TEMP TABLE corpus AS SELECT *, row_number() OVER "
            f"(ORDER BY date, doc_id) AS r FROM ({docs_sql})",
            params,
        )
        docs = self._con.execute(
            "SELECT doc_id, date, title, tokens FROM corpus ORDER BY r"
        ).fetchall()
        if not docs:
            return []
        if missing := next((doc[0] for doc in docs if doc[3] is None), None):
            raise EnvironmentSetupError(
                f"news_terms has no terms for article {missing}: run release verify on this release"
            )
        query = text.split(" ")
        counts: dict[str, np.ndarray] = {}
        for r, term, tf in self._con.execute(
            f"{_of_docs('terms', 'SELECT * FROM corpus', 'd.r, t.term, t.tf', 'JOIN')} WHERE "
            "t.term IN (SELECT unnest(?))",
            [sorted(set(query))],
        ).fetchall():
            counts.setdefault(term, np.zeros(len(docs), np.int64))[r - 1] = tf

        def vocabulary() -> np.ndarray:  # first use: the first document's, then first place
            return self._con.execute(
                f"{_of_docs('terms', 'SELECT * FROM corpus', 'count(*) AS df', 'JOIN')} "
                f"GROUP BY t.term ORDER BY min(d.r * {2**32} + t.first)"
            ).fetchnumpy()["df"]

        lengths = np.array([doc[3] for doc in docs], np.int64)
        scores = bm25.scores(lengths, counts, query, vocabulary)
        return [docs[i] for i in np.argsort(scores)[::-1][:limit]]

    def _nearest(self, text: str, vectors: np.ndarray, keys: list[str]) -> list[str]:
        if self._embed is None:
            raise EnvironmentSetupError(
                "this environment was opened without an embedding model: use "
                "open_environment for fuzzy look-ups"
            )
        query = np.asarray(self._embed([text]), dtype=np.float64)[0]
        sims = vectors @ (query / np.linalg.norm(query))
        return [keys[i] for i in np.argsort(sims)[::-1][:MATCHES]]

    # --- the knowledge graph ------------------------------------------------------------

    def count_events(
        self, date_range=None, head_entities=None, tail_entities=None, relations=None
    ) -> int:
        """The number of events (unique quadruples) matching every given filter."""
        sql, params = self._filters(date_range, head_entities, tail_entities, relations)
        return self._con.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0]

    def get_events(
        self,
        date_range=None,
        head_entities=None,
        tail_entities=None,
        relations=None,
        text_description=None,
    ) -> list[Event]:
        """Up to 30 matching events: the latest first, or, with ``text_description``, those
        of the news articles that match it best (BM25)."""
        filters = (date_range, head_entities, tail_entities, relations)
        if not text_description:
            sql, params = self._filters(*filters)
            rows = self._con.execute(
                f"SELECT date, head, relation, tail FROM ({sql}) "
                f"ORDER BY date DESC, head, relation, tail LIMIT {EVENTS_LIMIT}",
                params,
            ).fetchall()
            return [_event(*row) for row in rows]
        sql, params = self._filters(*filters, table="links")
        ranked = self._ranked(*self._articles(sql, params, None), text_description, EVENTS_LIMIT)
        by_doc: dict[str, list[tuple]] = {}
        for doc_id, *event in self._con.execute(
            f"SELECT doc_id, date, head, relation, tail FROM ({sql}) WHERE doc_id IN "
            "(SELECT unnest(?)) ORDER BY date DESC, head, relation, tail",
            [*params, [doc[0] for doc in ranked]],
        ).fetchall():
            by_doc.setdefault(doc_id, []).append(tuple(event))
        found: dict[tuple, None] = {}  # the events' values: an Event is made for the kept only
        for doc in ranked:
            if len(found) >= EVENTS_LIMIT:  # checked per document, as MIRAI does
                break
            found.update(dict.fromkeys(by_doc.get(doc[0], ())))
        return [_event(*event) for event in found]

    def get_entity_distribution(
        self, date_range=None, involved_relations=None, interacted_entities=None, entity_role=None
    ) -> dict[ISOCode, int]:
        """How many matching events each country takes part in (as head or tail), most
        first. ``interacted_entities`` keeps events with any of them on the other side
        (``entity_role`` "head" or "tail"), or on either side ("both" or None)."""
        if entity_role is not None and entity_role not in ROLES:
            raise ValueError(
                f"Input 'entity_role' must be a string 'head', 'tail', or 'both', "
                f"but received: {entity_role}"
            )
        relations = self._codes(involved_relations, "involved_relations")
        sql, params = self._events(date_range, relations=relations)
        others = self._isos(interacted_entities, "interacted_entities")
        if others:
            column = {"head": "tail IN (SELECT unnest(?))", "tail": "head IN (SELECT unnest(?))"}
            where = column.get(
                entity_role, "(head IN (SELECT unnest(?)) OR tail IN (SELECT unnest(?)))"
            )
            params = [*params, *([others] * where.count("?"))]
            sql = f"SELECT * FROM ({sql}) WHERE {where}"
        rows = self._con.execute(
            f"SELECT iso, count(*) AS n FROM (SELECT head AS iso FROM ({sql}) UNION ALL "
            f"SELECT tail FROM ({sql})) GROUP BY iso ORDER BY n DESC, iso",
            params * 2,
        ).fetchall()
        return {ISOCode(iso): n for iso, n in rows}

    def get_relation_distribution(
        self, date_range=None, head_entities=None, tail_entities=None
    ) -> dict[CAMEOCode, int]:
        """How many matching events each second-level relation has, most first."""
        sql, params = self._filters(date_range, head_entities, tail_entities, None)
        rows = self._con.execute(
            f"SELECT relation, count(*) AS n FROM ({sql}) GROUP BY relation "
            "ORDER BY n DESC, relation",
            params,
        ).fetchall()
        return {CAMEOCode(code): n for code, n in rows}

    # --- news ---------------------------------------------------------------------------

    def count_news_articles(
        self, date_range=None, head_entities=None, tail_entities=None, relations=None, keywords=None
    ) -> int:
        """The number of kept news articles behind the matching events that contain one of
        ``keywords`` (all of them without keywords)."""
        sql, params = self._articles(
            *self._filters(date_range, head_entities, tail_entities, relations, "links"), keywords
        )
        return self._con.execute(f"SELECT count(*) FROM ({sql})", params).fetchone()[0]

    def get_news_articles(
        self,
        date_range=None,
        head_entities=None,
        tail_entities=None,
        relations=None,
        keywords=None,
        text_description=None,
    ) -> list[tuple[Date, str]]:
        """Up to 15 of those articles as (date, title): the latest first, or those matching
        ``text_description`` best (BM25)."""
        sql, params = self._articles(
            *self._filters(date_range, head_entities, tail_entities, relations, "links"), keywords
        )
        if text_description:
            rows = self._ranked(sql, params, text_description, NEWS_LIMIT)
        else:
            rows = self._con.execute(
                f"SELECT * FROM ({sql}) ORDER BY date DESC, doc_id LIMIT {NEWS_LIMIT}", params
            ).fetchall()
        return [(Date(row[1].isoformat()), row[2]) for row in rows]

    def browse_news_article(self, date: Date, title: str) -> str:
        """The article of that date and title: its date, title and full text."""
        if not isinstance(date, Date):
            raise ValueError(f"Input 'date' must be a Date object, but received type {type(date)}")
        if not isinstance(title, str):
            raise ValueError(f"Input 'title' must be a string, but received type {type(title)}")
        texts = self._texts(date.date)
        if title not in texts:  # a later article is not found, as a missing one
            raise ValueError(
                f"No news article found with the specified date {date.date} and title {title}"
            )
        return f"{date}:\n{title}\n{texts[title]}"

    def _day_texts(self, day: str) -> dict[str, str]:
        """The texts of a day's articles by title (the lowest doc_id's, where titles repeat):
        nothing for a day on or after the cutoff, as ``news`` shows none. Decompressing the
        day's row group is most of a read, so one read serves the day's every article."""
        rows = self._con.execute(
            "SELECT title, text FROM news WHERE date = ? ORDER BY doc_id DESC", [day]
        ).fetchall()
        return dict(rows)  # the lowest doc_id comes last and stays

    # --- names and codes ----------------------------------------------------------------

    def map_country_name_to_iso(self, name: str) -> list[Country]:
        """The country of that name, else the 5 whose names are nearest (embeddings)."""
        if not isinstance(name, str):
            raise ValueError(f"Input 'name' must be a string, but received type {type(name)}")
        isos = (
            [self._name2iso[name]]
            if name in self._name2iso
            else self._nearest(name, self._country_vectors, list(self._iso2names))
        )
        return [Country(ISOCode(iso), self._iso2names[iso][0]) for iso in isos]

    def map_iso_to_country_name(self, iso_code: ISOCode) -> str:
        """The country's name."""
        try:  # the checks below only when this fails: as cheap as MIRAI's dict look-up
            if isinstance(iso_code, ISOCode):
                return self._iso2names[iso_code.code][0]
        except KeyError:
            pass
        return self._iso2names[self._iso(iso_code, "Input 'iso_code'")][0]

    def map_relation_description_to_cameo(self, description: str) -> list[Relation]:
        """The relation of that name or description, else the 5 nearest (embeddings)."""
        if not isinstance(description, str):
            raise ValueError(
                f"Input 'description' must be a string, but received type {type(description)}"
            )
        if description in self._text2code:
            codes = [self._text2code[description]]
        else:
            codes = self._nearest(description, self._relation_vectors, list(self._code2relation))
        return [self._relations[code] for code in codes]

    def map_cameo_to_relation(self, cameo_code: CAMEOCode) -> Relation:
        """The relation's name and description."""
        self._known(cameo_code)
        return self._relations[cameo_code.code]

    def get_parent_relation(self, cameo_code: CAMEOCode) -> Relation:
        """The first-level relation above a second-level one."""
        self._known(cameo_code)
        if len(cameo_code.code) != 3:
            raise ValueError(
                f"Only second level relations are accepted, but received: {cameo_code.code}"
            )
        return self._relations[cameo_code.code[:2]]

    def get_child_relations(self, cameo_code: CAMEOCode) -> list[Relation]:
        """The second-level relations under a first-level one."""
        self._known(cameo_code)
        if len(cameo_code.code) != 2:
            raise ValueError(
                f"Only first level relations are accepted, but received: {cameo_code.code}"
            )
        return list(self._children.get(cameo_code.code, ()))

    def get_sibling_relations(self, cameo_code: CAMEOCode) -> list[Relation]:
        """The relations on the same level under the same parent (all 20 first-level ones
        for a first-level code)."""
        self._known(cameo_code)
        if len(cameo_code.code) == 3:
            return list(self._children.get(cameo_code.code[:2], ()))
        return [self._relations[f"{n:02d}"] for n in range(1, 21)]


def _event(day: date, head: str, relation: str, tail: str) -> Event:
    return Event(Date(day.isoformat()), ISOCode(head), CAMEOCode(relation), ISOCode(tail))


def _of_docs(table: str, docs_sql: str, columns: str = "t.doc_id", join: str = "SEMI JOIN") -> str:
    """SQL: ``columns`` of the rows of ``table`` (as ``t``) of the documents of ``docs_sql``
    (as ``d`` where ``join`` is a JOIN), joined on the date too: DuckDB then skips the row
    groups (the tables are sorted by date) outside the documents' days, so a search of the last
    week reads a week's terms."""
    return (
        f"SELECT {columns} FROM {table} AS t {join} ({docs_sql}) AS d "
        "ON t.doc_id = d.doc_id AND t.date = d.date"
    )


def _any_in(column: str, keywords: int) -> str:
    """SQL: ``column`` holds one of ``keywords`` string parameters, case-insensitively (an OR
    of them: a list comprehension over a list parameter costs three times as much a row)."""
    return " OR ".join([f"contains(lower({column}), lower(?))"] * keywords)


def _unit(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to length 1 (float64, as the query is), so a look-up's cosine similarities
    are one product."""
    vectors = vectors.astype(np.float64)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
