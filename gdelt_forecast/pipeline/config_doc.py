"""docs/configuration.md, written from the config models (:mod:`gdelt_forecast.ground.config`): a
fixed header on how settings are given, then one section per config section, its docstring as
its intro, and a row per key with its type, its default as YAML writes it and its description.

:mod:`gdelt_forecast.pipeline.docs_pages` writes it (``make docs``) and checks that it is current.
"""

from __future__ import annotations

import inspect
import sys
import types
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import yaml
from annotated_types import Ge, Gt, Le, Lt, MaxLen, MinLen
from pydantic import BaseModel, IPvAnyAddress
from pydantic.fields import FieldInfo

from gdelt_forecast.ground.config import Config

HEADER = """\
# Configuration

Every setting of gdelt-forecast, written from the typed (pydantic) models of
`gdelt_forecast/ground/config.py` by `make docs` (`python -m gdelt_forecast.pipeline.docs_pages`):
edit a field's description there, not this page, which a test keeps equal to what the models say.
`configs/default.yaml` spells the same defaults out (a test keeps the two equal too).

## Giving settings

Every command takes `--config FILE`, `--data-root DIR` and repeatable
`--set section.key=value` (values are YAML: `--set gdelt.tables=[export]`,
`--set agents.sandbox.wall_s=60`). Each of these replaces what the one before it set:

1. the defaults listed below;
2. the config file: `--config`, else `$GDELT_FORECAST_CONFIG`, else the checkout's
   `configs/default.yaml`; a file holds only the keys it changes, under their sections;
3. `$GDELT_FORECAST_DATA_ROOT`, when set, for `data_root`;
4. each `--set`, in order, then the command's own options that set a key (its row below
   names them);
5. `--data-root`.

A DAG run takes the same through its params `config`, `set` and `data_root`
([Airflow](airflow.md)), and refuses a relative data root. A bad key or value is a one-line
error naming it, with exit code 2; so is a value (or key) holding a character no record can
hold raw (a lone surrogate, which is how a byte of `--set` that is not UTF-8 arrives, a NUL or
a control character other than tab and newline): it is refused, not mended, since a path or a
model name must mean what was typed. No secret lives in a config file: `llm.api_key_env` and
`release.embedding_api_key_env` name the environment variables holding the API keys, and an
`s3://` data root takes the standard AWS variables or files.
`gdelt-forecast --version` prints the package version and the commit that a release's
manifest would record as its `code_version`.

Below, each key is written in full, as `--set` takes it, and its default as YAML writes it
(`null`: empty).
"""

_NAMES = {
    int: "int",
    float: "float",
    bool: "bool",
    str: "str",
    Path: "path",
    date: "date (YYYY-MM-DD)",
    IPvAnyAddress: "IP address",
}


def sections(
    model: type[BaseModel] = Config, key: str = ""
) -> Iterator[tuple[str, type[BaseModel], dict[str, FieldInfo]]]:
    """Each section as (its key, its model, its own settings by full key), a nested section
    right after the one holding it; the top level's key is empty."""
    leaves, nested = {}, []
    for name, field in model.model_fields.items():
        full = f"{key}.{name}" if key else name
        if _is_section(field.annotation):
            nested.append((full, field.annotation))
        else:
            leaves[full] = field
    yield key, model, leaves
    for full, section in nested:
        yield from sections(section, full)


def _is_section(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def undocumented(root: type[BaseModel] = Config) -> list[str]:
    """The settings of ``root`` without a description and its sections without a docstring."""
    missing = []
    for key, model, leaves in sections(root):
        if not (model.__doc__ or "").strip():
            missing.append(f"{key or 'the top level'} (section {model.__name__}: no docstring)")
        missing += [f"{full} (no description)" for full, f in leaves.items() if not f.description]
    return missing


def type_text(annotation: Any, constraints: list[Any] | tuple[Any, ...] = ()) -> str:
    """``annotation`` as a reader writes the value: names, allowed values, bounds."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Annotated:
        inner, *extra = args
        found = [m for e in extra for m in (e.metadata if isinstance(e, FieldInfo) else [e])]
        return type_text(inner, [*constraints, *found])
    if origin in (Union, types.UnionType):
        given = [type_text(a, constraints) for a in args if a is not type(None)]
        return " or ".join(given + ["null"] * (type(None) in args))
    if origin is Literal:
        quoted = [f"`{value}`" for value in args]
        return quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    if origin is list:
        return _bounded(f"list[{type_text(args[0])}]", constraints)
    if origin is dict:
        return f"dict[{type_text(args[0])}, {type_text(args[1])}]"
    if annotation not in _NAMES:
        raise TypeError(f"config_doc: no name for the type {annotation!r}")
    return _bounded(_NAMES[annotation], constraints)


def _length(shortest: int | None, longest: int | None) -> str:
    def items(n: int) -> str:
        return f"{n} item{'s' * (n != 1)}"

    if shortest == longest:
        return f"exactly {items(shortest)}"
    bounds = [f"at least {items(shortest)}"] * (shortest is not None)
    return ", ".join(bounds + [f"at most {items(longest)}"] * (longest is not None))


def _bounded(name: str, constraints: list[Any] | tuple[Any, ...]) -> str:
    """``name`` with its bounds (``1 ≤ int ≤ 64``, ``float > 0``) and other constraints."""
    low = high = None  # (value, strict)
    shortest = longest = None  # a list's bounds on its length
    notes = []
    for c in constraints:
        if isinstance(c, Ge | Gt):
            low = (c.ge, False) if isinstance(c, Ge) else (c.gt, True)
        elif isinstance(c, Le | Lt):
            high = (c.le, False) if isinstance(c, Le) else (c.lt, True)
        elif isinstance(c, MinLen):
            shortest = c.min_length
        elif isinstance(c, MaxLen):
            longest = c.max_length
        elif getattr(c, "pattern", None):
            notes.append(f"matching `{c.pattern}`")
        else:  # a constraint this page had no words for would go unsaid
            raise TypeError(f"config_doc: no wording for the constraint {c!r} of {name}")
    if shortest is not None or longest is not None:
        notes.insert(0, _length(shortest, longest))
    if low and high:
        text = f"{low[0]} {'<' if low[1] else '≤'} {name} {'<' if high[1] else '≤'} {high[0]}"
    elif low:
        text = f"{name} {'>' if low[1] else '≥'} {low[0]}"
    elif high:
        text = f"{name} {'<' if high[1] else '≤'} {high[0]}"
    else:
        text = name
    return ", ".join([text, *notes])


def default_text(value: Any) -> str:
    """A default (as JSON-mode pydantic dumps it) as YAML writes it, on one line."""
    written = yaml.safe_dump(value, default_flow_style=True, width=sys.maxsize, allow_unicode=True)
    return written.removesuffix("\n...\n").strip()


def _options() -> dict[str, list[str]]:
    """The command-line options that set each key, by key (only stages' parameters set keys)."""
    from gdelt_forecast.pipeline.stages import STAGES

    found: dict[str, list[str]] = {}
    for stage in STAGES.values():
        for p in stage.parameters if stage.command else ():
            if p.sets:
                found.setdefault(p.sets, []).append(f"`gdelt-forecast {stage.command} {p.option}`")
    return found


def _cell(text: str) -> str:
    """``text`` inside a table cell, where a bare bar would end the cell."""
    return text.replace("|", "\\|")


def render() -> str:
    """The page as the models say it."""
    defaults = Config().model_dump(mode="json")
    options = _options()
    parts = [HEADER]
    for key, model, leaves in sections():
        depth = "#" * (2 + key.count("."))
        parts.append(f"\n{depth} {f'`{key}`' if key else 'Top level'}\n\n")
        parts.append(inspect.cleandoc(model.__doc__ or "") + "\n\n")
        parts.append("| key | type | default | description |\n|---|---|---|---|\n")
        for full, field in leaves.items():
            value = defaults
            for part in full.split("."):
                value = value[part]
            described = field.description or ""
            if full in options:
                described += f" Set also by {' and '.join(options[full])}."
            cells = (
                f"`{full}`",
                type_text(field.annotation, field.metadata),
                f"`{default_text(value)}`",
                described,
            )
            parts.append("| " + " | ".join(_cell(c) for c in cells) + " |\n")
    return "".join(parts)
