"""``mirai/info/``: what MIRAI's API module (``APIs/api_implementation.py``) loads at import.

- ``dict_code2relation.json``: every first- and second-level CAMEO code ->
  ``{"Name", "Description"}`` (MIRAI's names, the CAMEO codebook's definitions);
- ``dict_iso2alternames_GeoNames.json``: every ISO alpha-3 code -> its names, preferred
  first (MIRAI took them from GeoNames; ours come from the reference tables, see
  ``gdelt_forecast/reference/sources/README.md``);
- ``country_embeddings.npy`` and ``relation_embeddings.npy``: one row per key of those
  dicts, in order, embedding what MIRAI's ``_encode_country_relation.py`` embeds (a country's
  first name; a relation's ``"Name: Description"``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.embeddings import embed, model_name
from gdelt_forecast.ground.files import write_json
from gdelt_forecast.reference import tables


def code2relation() -> dict[str, dict[str, str]]:
    rows = sorted(
        (r for r in tables.relations().to_pylist() if r["level"] in (1, 2)),
        key=lambda r: r["code"],
    )
    return {r["code"]: {"Name": r["name"], "Description": r["description"]} for r in rows}


def iso2names() -> dict[str, list[str]]:
    names: dict[str, list[tuple[int, str]]] = {}
    for row in tables.country_names().to_pylist():
        names.setdefault(row["iso3"], []).append((row["rank"], row["name"]))
    return {iso: [name for _, name in sorted(names[iso])] for iso in sorted(names)}


def write_info(cfg: Config, out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    relations, countries = code2relation(), iso2names()
    write_json(out / "dict_code2relation.json", relations)
    write_json(out / "dict_iso2alternames_GeoNames.json", countries)
    vectors = embed(
        cfg,
        [names[0] for names in countries.values()]
        + [f"{r['Name']}: {r['Description']}" for r in relations.values()],
    )
    np.save(out / "country_embeddings.npy", vectors[: len(countries)])
    np.save(out / "relation_embeddings.npy", vectors[len(countries) :])
    return {
        "embedding_model": model_name(cfg),
        "dimensions": int(vectors.shape[1]),
        "countries": len(countries),
        "relations": len(relations),
    }
