"""The dataset card, ``README.md``: Hugging Face's YAML header, then what a reader needs.

The header's ``configs:`` give one config per table (per task, with its splits) and its
``data_files``, so
``datasets.load_dataset(<release dir>, <config>)`` works offline, and ``dataset_info``
spells every table's features as ``datasets`` writes them (``release verify`` checks the
Parquet schemas against it). The Arrow-to-features mapping is written here because
``datasets`` is a heavy, optional dependency; a test keeps it equal to ``datasets``' own.

The text after the header is ``templates/card.md.j2``, filled from the manifest's metadata and
the release's statistics; its filters (``num``, ``on``, ``stem``, ``repr``) are registered here.
"""

from __future__ import annotations

from pathlib import PurePosixPath

import pyarrow as pa
import yaml
from jinja2 import Environment, PackageLoader, StrictUndefined

from gdelt_forecast.contract.layout import TABLES
from gdelt_forecast.ground.embeddings import LOCAL_MODEL

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


# Markdown, not HTML: nothing is escaped. A misspelt field is an error, not an empty cell.
_ENV = Environment(
    loader=PackageLoader("gdelt_forecast.release"),
    autoescape=False,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
)
_ENV.filters.update(
    num=lambda value, spec=",": format(value, spec),  # 1,234; or as num(".1f") says
    on=lambda switch: "on" if switch else "off",
    stem=lambda path: PurePosixPath(path).stem,
    repr=repr,
)
_ENV.globals.update(
    LOCAL_MODEL=LOCAL_MODEL,
    GDELT_BIBTEX=GDELT_BIBTEX,
    MIRAI_BIBTEX=MIRAI_BIBTEX,
    OPENFORECAST_BIBTEX=OPENFORECAST_BIBTEX,
    EV2_BIBTEX=EV2_BIBTEX,
)


def render(meta: dict, schemas: dict[str, pa.Schema], rows: dict[str, int], stats: dict) -> str:
    """The card of a release: ``meta`` as the build gathers it (the manifest's, with
    ``license`` and ``quality``), ``rows`` each table's row count, ``stats`` the headline
    numbers of ``stats.write_stats``."""
    top = yaml.safe_dump(
        header(schemas, meta, rows), sort_keys=False, allow_unicode=True, width=100
    )
    tables = [(t, hf_features(schemas[t.name])) for t in TABLES if t.name in schemas]
    return _ENV.get_template("card.md.j2").render(
        yaml_header=top,
        meta=meta,
        rows=rows,
        stats=stats,
        tables=tables,
        empty=[t.name for t, _ in tables if not rows.get(t.name)],
        # one row per method and split: the template's table sees when it has no row at all
        baselines=[
            (method, split, scores)
            for method, splits in meta["baselines"].items()
            for split, scores in splits.items()
        ],
    )


def _model_built(section: dict) -> str:
    """The card's "Model-built parts" alone (quality.json's ``model_built``), for tests."""
    return _ENV.get_template("_macros.md.j2").module.model_built(section)
