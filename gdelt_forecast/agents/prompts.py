"""The agents' prompts (``prompts/mirai-react-v1/``, see its README), the API they describe
and the tools they offer: MIRAI's API subsets (Event-Only, News-Only, All) and ``run_code``.

The API description is written here from the environment's own signatures and docstrings
(the functions an agent may call, their parameters with MIRAI's types, what they return),
so it always says what the code does.
"""

from __future__ import annotations

import dataclasses
import inspect
from functools import cache
from pathlib import Path

from gdelt_forecast.environment import Environment, tool_schemas
from gdelt_forecast.environment import types as api_types

PROMPT_VERSION = "mirai-react-v1"
PROMPTS = Path(__file__).parent / "prompts" / PROMPT_VERSION

_MAPPING = (
    "map_country_name_to_iso", "map_iso_to_country_name", "map_relation_description_to_cameo",
    "map_cameo_to_relation", "get_parent_relation", "get_child_relations",
    "get_sibling_relations",
)  # fmt: skip
_EVENTS = ("count_events", "get_events", "get_entity_distribution", "get_relation_distribution")
_NEWS = ("count_news_articles", "get_news_articles", "browse_news_article")
# MIRAI's API descriptions: api_description_{kg,news,full}.py.
APIS = {"events": _MAPPING + _EVENTS, "news": _MAPPING + _NEWS, "all": _MAPPING + _EVENTS + _NEWS}

_TYPES = {
    "date_range": "DateRange",
    "head_entities": "list[ISOCode]",
    "tail_entities": "list[ISOCode]",
    "interacted_entities": "list[ISOCode]",
    "relations": "list[CAMEOCode]",
    "involved_relations": "list[CAMEOCode]",
    "entity_role": "str",  # 'head', 'tail' or 'both'
    "keywords": "list[str]",
    "text_description": "str",
    "date": "Date",
    "title": "str",
    "name": "str",
    "description": "str",
    "iso_code": "ISOCode",
    "cameo_code": "CAMEOCode",
}

RUN_CODE = {
    "type": "function",
    "function": {
        "name": "run_code",
        "description": "Run a Python code snippet that may call the API's functions and the "
        "allowed libraries; its printed output (and the value of a last expression) is the "
        "observation. Variables persist between snippets.",
        "parameters": {
            "type": "object",
            "properties": {"code": {"type": "string", "description": "Python code"}},
            "required": ["code"],
            "additionalProperties": False,
        },
    },
}


def text(name: str) -> str:
    return (PROMPTS / f"{name}.txt").read_text(encoding="utf-8").strip()


def functions(apis: str) -> list[dict]:
    """The tool schemas of the API subset ``apis``, in MIRAI's order."""
    by_name = {t["function"]["name"]: t for t in tool_schemas()}
    return [by_name[name] for name in APIS[apis]]


def parameters(apis: str) -> dict[str, list[str]]:
    """Each function of ``apis`` with its parameters, in order."""
    return {t["function"]["name"]: list(t["function"]["parameters"]["properties"])
            for t in functions(apis)}  # fmt: skip


@cache
def api_description(apis: str) -> str:
    """MIRAI's value types and the functions of ``apis`` as Python stubs with docstrings."""
    blocks = [_type_stub(t) for t in _value_types()]
    for tool in functions(apis):
        name = tool["function"]["name"]
        method = getattr(Environment, name)
        required = set(tool["function"]["parameters"]["required"])
        params = [
            f"{p}: {_TYPES[p]}" if p in required else f"{p}: {_TYPES[p]} | None = None"
            for p in tool["function"]["parameters"]["properties"]
        ]
        returns = inspect.signature(method).return_annotation
        doc = " ".join(inspect.getdoc(method).replace("``", "").split())
        blocks.append(f'def {name}({", ".join(params)}) -> {returns}:\n    """{doc}"""')
    return "\n\n".join(blocks)


def _value_types() -> list[type]:
    names = ("Date", "DateRange", "ISOCode", "Country", "CAMEOCode", "Relation", "Event",
             "NewsArticle")  # fmt: skip
    return [getattr(api_types, n) for n in names]


def _type_stub(kind: type) -> str:
    lines = ["@dataclass", f"class {kind.__name__}:"]
    if kind.__doc__ and not kind.__doc__.startswith(f"{kind.__name__}("):
        lines.append(f'    """{" ".join(kind.__doc__.replace("``", "").split())}"""')
    for f in dataclasses.fields(kind):
        if f.name.startswith("_"):
            continue
        lines.append(f"    {f.name}: {f.type}")
    return "\n".join(lines)
