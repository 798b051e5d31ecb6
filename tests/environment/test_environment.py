"""MIRAI's API on the demo release: the answers against the release's own MIRAI files
(data_kg.csv, data_news.csv, read here with DuckDB as MIRAI reads them with pandas), the
cutoff against a planted future, the look-ups, the checks and the tool schemas."""

from __future__ import annotations

import json
from contextlib import suppress
from datetime import date, timedelta

import duckdb
import jsonschema
import pytest

from gdelt_forecast.environment import (
    CAMEOCode,
    Country,
    Date,
    DateRange,
    Environment,
    ISOCode,
    call_tool,
    open_environment,
    tool_schemas,
)
from gdelt_forecast.environment.tools import TOOLS
from tests.environment.conftest import FUTURE_DAY, FUTURE_TITLE


@pytest.fixture(scope="module")
def env(release):
    with open_environment(release, "2025-08-13") as opened:  # every demo day is visible
        yield opened


@pytest.fixture(scope="module")
def mirai(release):
    """MIRAI's two files as DuckDB tables, events deduplicated on QuadEventCode as MIRAI's
    count and distribution functions do."""
    con = duckdb.connect()
    for name in ("data_kg", "data_news"):
        path = release / "mirai" / "MIRAI" / f"{name}.csv"
        con.execute(
            f"CREATE TABLE {name} AS SELECT * FROM read_csv('{path}', delim='\\t', "
            "header=true, all_varchar=true)"
        )
    con.execute("CREATE TABLE kg_events AS SELECT DISTINCT ON (QuadEventCode) * FROM data_kg")
    yield con
    con.close()


def _one(con, sql: str):
    return con.execute(sql).fetchone()[0]


def test_counts_and_distributions_equal_mirais_files(env, mirai):
    events = _one(mirai, "SELECT count(*) FROM kg_events")
    assert env.count_events() == events > 0
    assert len(env.get_events()) == min(events, 30)
    usa = _one(mirai, "SELECT count(*) FROM kg_events WHERE Actor1CountryCode = 'USA'")
    assert env.count_events(head_entities=[ISOCode("USA")]) == usa > 0
    first_level = _one(mirai, "SELECT count(*) FROM kg_events WHERE EventBaseCode LIKE '04%'")
    assert env.count_events(relations=[CAMEOCode("04")]) == first_level > 0

    relations = dict(
        mirai.execute("SELECT EventBaseCode, count(*) FROM kg_events GROUP BY 1").fetchall()
    )
    assert {c.code: n for c, n in env.get_relation_distribution().items()} == relations
    entities = dict(
        mirai.execute(
            "SELECT iso, count(*) FROM (SELECT Actor1CountryCode AS iso FROM kg_events UNION ALL "
            "SELECT Actor2CountryCode FROM kg_events) GROUP BY iso"
        ).fetchall()
    )
    got = env.get_entity_distribution()
    assert {c.code: n for c, n in got.items()} == entities
    assert list(got.values()) == sorted(got.values(), reverse=True)

    docs = "SELECT count(*) FROM data_news WHERE Docid IN (SELECT Docid FROM data_kg){}"
    assert env.count_news_articles() == _one(mirai, docs.format("")) > 0
    trade = " AND (Title ILIKE '%trade%' OR Text ILIKE '%trade%')"
    assert env.count_news_articles(keywords=["trade"]) == _one(mirai, docs.format(trade)) > 0


def test_news_search_and_browse(env, mirai):
    day, title, text = mirai.execute(
        "SELECT Date, Title, Text FROM data_news ORDER BY Docid LIMIT 1"
    ).fetchone()
    found = env.get_news_articles(text_description=title)
    assert found[0] == (Date(day), title) and len(found) <= 15
    assert env.browse_news_article(Date(day), title) == f"Date('{day}'):\n{title}\n{text}"
    day_before = (date.fromisoformat(day) - timedelta(days=1)).isoformat()
    with pytest.raises(ValueError, match="No news article found with the specified date"):
        env.browse_news_article(Date(day_before), title)
    latest = env.get_news_articles()
    assert len(latest) == min(env.count_news_articles(), 15)
    assert all(isinstance(d, Date) and isinstance(t, str) for d, t in latest)


def test_every_article_of_a_day_is_browsed_from_the_one_read_of_it(env, mirai):
    """browse_news_article keeps a day's texts after its first article: each later article of
    that day is its own text (MIRAI's first by Docid where titles repeat), and a title the day
    lacks is still not found."""
    (day,) = mirai.execute(
        "SELECT Date FROM data_news GROUP BY Date ORDER BY count(*) DESC, Date LIMIT 1"
    ).fetchone()
    articles = mirai.execute(
        "SELECT Title, first(Text ORDER BY Docid) FROM data_news WHERE Date = ? GROUP BY Title",
        [day],
    ).fetchall()
    assert len(articles) > 1
    for title, text in articles:
        assert env.browse_news_article(Date(day), title) == f"Date('{day}'):\n{title}\n{text}"
    with pytest.raises(ValueError, match="No news article found"):
        env.browse_news_article(Date(day), articles[0][0] + " (not a title of that day)")


def test_the_cutoff_day_itself_is_not_visible(release, mirai):
    with open_environment(release, "2025-07-22") as env:  # the demo's first day: hidden
        assert env.count_events() == 0 and env.get_events() == []
        assert env.get_relation_distribution() == {} and env.count_news_articles() == 0
        assert env.cutoff.isoformat() == "2025-07-22"
    with open_environment(release, "2025-08-07") as env:  # the query date: its day is hidden
        before = _one(mirai, "SELECT count(*) FROM kg_events WHERE DateStr < '2025-08-07'")
        assert env.count_events() == before > 0
        assert all(e.date.date < "2025-08-07" for e in env.get_events())
        docs = "SELECT count(*) FROM data_news WHERE Docid IN (SELECT Docid FROM data_kg)"
        assert env.count_news_articles() == _one(mirai, f"{docs} AND Date < '2025-08-07'") > 0


def test_a_planted_future_reaches_no_call(planted):
    """The future quad TUV 057 NRU (2025-08-20) and its article: hidden from every call at a
    cutoff before them, whatever range or description asks, and visible after."""
    everything = DateRange(Date("2025-01-01"), Date("2026-12-31"))  # runs past: clamped
    tuv = [ISOCode("TUV")]
    with open_environment(planted, "2025-08-10") as env:
        assert env.count_events(everything, head_entities=tuv) == 0
        assert env.get_events(everything, head_entities=tuv) == []
        assert ISOCode("TUV") not in env.get_entity_distribution(everything)
        assert CAMEOCode("057") not in env.get_relation_distribution(everything)
        assert env.count_news_articles(everything, keywords=["Tuvalu"]) == 0
        found = env.get_news_articles(everything, text_description=FUTURE_TITLE)
        assert FUTURE_TITLE not in [t for _, t in found]
        assert all(
            e.head_entity.code != "TUV"
            for e in env.get_events(everything, text_description=FUTURE_TITLE)
        )
        with pytest.raises(ValueError, match="No news article found"):
            env.browse_news_article(Date(FUTURE_DAY.isoformat()), FUTURE_TITLE)
        with pytest.raises(AttributeError, match="fixed when it opens"):
            env.cutoff = FUTURE_DAY  # type: ignore[misc]
        with pytest.raises(AttributeError):
            env._cutoff = FUTURE_DAY
        assert env.count_events(everything, head_entities=tuv) == 0
    with open_environment(planted, "2025-08-21") as later:  # the plant is real
        assert later.count_events(head_entities=tuv) == 1
        assert later.browse_news_article(Date(FUTURE_DAY.isoformat()), FUTURE_TITLE)
        assert later.count_news_articles(everything, keywords=["Tuvalu"]) == 1
        found = later.get_news_articles(everything, text_description=FUTURE_TITLE)
        assert found[0] == (Date(FUTURE_DAY.isoformat()), FUTURE_TITLE)
        assert later.get_events(everything, text_description=FUTURE_TITLE)[0].head_entity == tuv[0]


def test_lookups(env):
    assert env.map_iso_to_country_name(ISOCode("CHN")) == "China"
    assert env.map_country_name_to_iso("China") == [Country(ISOCode("CHN"), "China")]
    korea = [c.iso_code.code for c in env.map_country_name_to_iso("Korea")]
    assert len(korea) == 5 and {"KOR", "PRK"} <= set(korea[:2])
    guns = [r.cameo_code.code for r in env.map_relation_description_to_cameo("Fight with guns")]
    assert len(guns) == 5 and guns[0] == "193"
    assert env.get_parent_relation(CAMEOCode("193")).name == "Fight"
    children = env.get_child_relations(CAMEOCode("19"))
    assert [r.cameo_code.code for r in children] == [f"19{n}" for n in range(7)]
    assert env.get_sibling_relations(CAMEOCode("193")) == children
    assert [r.cameo_code.code for r in env.get_sibling_relations(CAMEOCode("02"))] == [
        f"{n:02d}" for n in range(1, 21)
    ]
    assert env.map_cameo_to_relation(CAMEOCode("036")).name.startswith("Express intent to meet")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda e: e.count_events(head_entities=[ISOCode("ZZZ")]), "valid ISO alpha-3"),
        (lambda e: e.count_events(head_entities=ISOCode("USA")), "must be a list"),
        (lambda e: e.get_parent_relation(CAMEOCode("19")), "Only second level"),
        (lambda e: e.get_child_relations(CAMEOCode("193")), "Only first level"),
        (lambda e: e.map_cameo_to_relation(CAMEOCode("999")), "valid CAMEO code"),
        (lambda e: e.get_entity_distribution(entity_role="subject"), "'head', 'tail', or"),
        (lambda e: DateRange(Date("2025-08-07"), Date("2025-08-01")), "before or equal"),
        (lambda e: Date("2025-8-7"), "YYYY-MM-DD"),
    ],
)
def test_bad_arguments_are_value_errors_as_in_mirai(env, call, message):
    with pytest.raises(ValueError, match=message):
        call(env)


def test_tool_schemas_validate_and_round_trip_a_call(env):
    schemas = tool_schemas()
    assert [t["function"]["name"] for t in schemas] == list(TOOLS) and len(TOOLS) == 14
    for tool in schemas:
        jsonschema.Draft202012Validator.check_schema(tool["function"]["parameters"])
    count = next(t for t in schemas if t["function"]["name"] == "count_events")["function"]
    arguments = {
        "date_range": {"start_date": "2025-08-01", "end_date": None},
        "head_entities": ["USA"],
        "relations": ["04"],
    }
    jsonschema.validate(arguments, count["parameters"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"head_entities": ["usa"]}, count["parameters"])
    expected = env.count_events(
        DateRange(Date("2025-08-01")), [ISOCode("USA")], None, [CAMEOCode("04")]
    )
    assert call_tool(env, "count_events", json.dumps(arguments)) == expected
    events = call_tool(env, "get_events", {"head_entities": ["USA"]})
    assert events and all(e["head_entity"] == "USA" for e in events)
    assert json.loads(json.dumps(events)) == events
    browse = next(t for t in schemas if t["function"]["name"] == "browse_news_article")
    assert browse["function"]["parameters"]["required"] == ["date", "title"]
    with pytest.raises(ValueError, match="takes no argument cutoff"):
        call_tool(env, "get_events", {"cutoff": "2030-01-01"})


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("count_events", {"date_range": "2025-08-01"},
         "Input 'date_range' must be a DateRange object, but received type <class 'str'>"),
        ("count_events", {"date_range": {"start_date": 20250801}},
         "Attribute 'start_date' of class DateRange must be a Date object, but received type "
         "<class 'int'>"),
        ("count_events", {"date_range": {"from": "2025-08-01"}},
         "DateRange takes start_date and end_date, not from"),
        ("get_events", {"head_entities": "USA"},
         "Input 'head_entities' must be a list, but received type <class 'str'>"),
        ("get_events", {"relations": [4]},
         "Input 'relations' must be a list of CAMEOCode objects, but received type <class 'int'>"),
        ("get_events", {"head_entities": ["USA"] * 301}, "Input 'head_entities' holds 301 items"),
        ("get_news_articles", {"keywords": [["trade"]]},
         "Input 'keywords' must be a list of strings, but received type <class 'list'>"),
        ("get_news_articles", {"text_description": "x " * 450_000},
         "Input 'text_description' is 900,000 characters long, more than the 1,000"),
        ("browse_news_article", {"date": "2025-08-01"},
         "browse_news_article() missing required argument: title"),
        ("map_iso_to_country_name", {"iso_code": {"code": "USA"}},
         "Input 'iso_code' must be a ISOCode object, but received type <class 'dict'>"),
        ("count_events", "[1, 2]", "the arguments of count_events are not an object"),
        ("count_events", "[" * 200_000, "the arguments of count_events are not JSON"),
    ],
)  # fmt: skip
def test_a_call_of_the_wrong_types_is_a_value_error_in_mirais_words(env, name, arguments, message):
    with pytest.raises(ValueError) as raised:
        call_tool(env, name, arguments)
    assert str(raised.value).startswith(message)


def test_no_json_value_in_any_argument_raises_anything_but_a_value_error(env):
    values = [None, 1, 2.5, True, "", "x" * 5000, "2025-08-01", [], [1], [[]], ["USA"] * 500,
              {}, {"start_date": []}, {"end_date": "2025-13-45"}]  # fmt: skip
    for tool in tool_schemas():
        name, params = tool["function"]["name"], tool["function"]["parameters"]["properties"]
        for param in params:
            for value in values:
                with suppress(ValueError):
                    call_tool(env, name, {param: value})


def test_a_call_past_its_deadline_is_a_value_error_and_the_next_call_works(env):
    with pytest.raises(ValueError, match="get_events ran past its 1e-09 s"):
        call_tool(env, "get_events", {}, deadline_s=1e-9)
    assert call_tool(env, "count_events", {}, deadline_s=10) == env.count_events()


def test_an_environment_since_a_day_shows_that_day_on_and_nothing_before(release):
    """The baselines' narrower view: the days from ``since`` to the cutoff, exactly those."""
    cutoff, since = date(2025, 8, 13), date(2025, 8, 9)
    with Environment(release, cutoff, embed=None) as whole:
        by_day = {d: whole.count_events(DateRange(Date(d.isoformat()), Date(d.isoformat())))
                  for d in (since + timedelta(days=n) for n in range(-4, 4))}  # fmt: skip
    assert sum(n for d, n in by_day.items() if d < since) > 0  # something to hide
    with Environment(release, cutoff, embed=None, since=since) as narrow:
        for day, n in by_day.items():
            shown = narrow.count_events(DateRange(Date(day.isoformat()), Date(day.isoformat())))
            assert shown == (n if day >= since else 0), day
        assert narrow.count_events() == sum(n for d, n in by_day.items() if d >= since)
