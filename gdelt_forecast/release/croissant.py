"""MLCommons Croissant 1.0 metadata (JSON-LD) for a release folder.

Mapping decisions, each checked against mlcroissant 1.1.1 (validation and record generation):

- Every Parquet file of a table is a ``cr:FileObject`` whose ``@id`` and ``contentUrl`` are
  its path relative to the release folder (slashes in ids are fine for mlcroissant), with
  the manifest's sha256 and size. A single-file table's fields read that FileObject, so
  mlcroissant verifies its sha256. A multi-file table also gets a ``cr:FileSet``
  (``<table>-files``, ``includes`` = the table's glob, resolved against the folder holding
  the JSON-LD) which its fields read: a field has one source, and a FileSet declared
  ``containedIn`` its FileObjects validates but yields no records in mlcroissant 1.1.1.
- Arrow types map to schema.org atomic types: strings -> sc:Text, integers -> sc:Integer,
  floats -> sc:Float, bool -> sc:Boolean, date32/date64 -> sc:Date, timestamps (with or
  without time zone) -> sc:DateTime. The sized ``cr:Int64``-style types are left out: they
  are mlcroissant extensions, not part of the 1.0 vocabulary.
- ``list<x>`` is a field with ``repeated: true`` (Croissant 1.0; ``isArray`` is 1.1). A
  struct is a field with one ``subField`` per member, each reading the struct column through
  a ``jsonPath`` transform; ``list<struct>`` is the same with ``repeated: true`` on the
  parent, which mlcroissant yields as a list of dicts. Deeper nesting raises TypeError: no
  table has it, and mlcroissant files a struct's own struct members under the wrong key.
- The ``@context`` is the spec's (Appendix 1) plus ``equivalentProperty`` and
  ``samplingRate``, without which mlcroissant warns that the context is not standard.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from gdelt_forecast.contract.layout import TABLES

_CONTEXT_TERMS = (
    "citeAs column equivalentProperty extract field fileProperty fileObject fileSet format "
    "includes isLiveDataset jsonPath key md5 parentField path recordSet references regex "
    "repeated replace samplingRate separator source subField transform"
)
CONTEXT: dict = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    **{term: f"cr:{term}" for term in _CONTEXT_TERMS.split()},
}
_CC_LICENSE = re.compile(r"cc-(by(?:-nc)?(?:-nd|-sa)?)-(\d\.\d)")


def license_url(license: str) -> str:
    """The Creative Commons deed URL of a Hugging Face style id, else the id unchanged."""
    if match := _CC_LICENSE.fullmatch(license.lower()):
        return f"https://creativecommons.org/licenses/{match[1]}/{match[2]}/"
    if license.lower() == "cc0-1.0":
        return "https://creativecommons.org/publicdomain/zero/1.0/"
    return license


_SCALAR_TYPES = (
    (pa.types.is_string, "sc:Text"),
    (pa.types.is_large_string, "sc:Text"),
    (pa.types.is_integer, "sc:Integer"),
    (pa.types.is_floating, "sc:Float"),
    (pa.types.is_boolean, "sc:Boolean"),
    (pa.types.is_date, "sc:Date"),
    (pa.types.is_timestamp, "sc:DateTime"),
)


def _node(type_: str, id_: str, name: str | None = None, **properties: object) -> dict:
    return {"@type": type_, "@id": id_, "name": name or id_, **properties}


def _scalar_type(type_: pa.DataType, where: str) -> str:
    for matches, data_type in _SCALAR_TYPES:
        if matches(type_):
            return data_type
    # Also reached by lists and structs below a list or struct (see the module docstring).
    raise TypeError(f"{where}: no Croissant type for Arrow type {type_}")


def _field(id_: str, name: str, type_: pa.DataType, source: dict) -> dict:
    repeated = pa.types.is_list(type_) or pa.types.is_large_list(type_)
    item = type_.value_type if repeated else type_
    if pa.types.is_struct(item):
        field = _node(
            "cr:Field",
            id_,
            name,
            subField=[
                _node(
                    "cr:Field",
                    f"{id_}/{member.name}",
                    member.name,
                    dataType=_scalar_type(member.type, f"{id_}/{member.name}"),
                    source={**source, "transform": {"jsonPath": member.name}},
                )
                for member in item
            ],
        )
    else:
        field = _node("cr:Field", id_, name, dataType=_scalar_type(item, id_), source=source)
    return {**field, "repeated": True} if repeated else field


def _file(item: dict, encoding: str) -> dict:
    return _node(
        "cr:FileObject",
        item["path"],
        contentUrl=item["path"],
        encodingFormat=encoding,
        contentSize=f"{item['bytes']} B",
        sha256=item["sha256"],
    )


def croissant(release_dir: Path, meta: dict, files: list[dict]) -> dict:
    """MLCommons Croissant 1.0 JSON-LD for the release in release_dir."""
    distribution: list[dict] = []
    record_sets: list[dict] = []
    for table in TABLES:
        parts = sorted(
            (f for f in files if fnmatch.fnmatchcase(f["path"], table.glob)),
            key=lambda f: f["path"],
        )
        if not parts:
            continue
        # An empty table's files travel, but a record set that yields nothing is left out,
        # as the card leaves the table out.
        if not sum(part.get("rows", 0) for part in parts):
            distribution += [_file(part, "application/x-parquet") for part in parts]
            continue
        distribution += [_file(part, "application/x-parquet") for part in parts]
        if len(parts) == 1:
            source = {"fileObject": {"@id": parts[0]["path"]}}
        else:
            file_set = _node(
                "cr:FileSet",
                f"{table.name}-files",
                encodingFormat="application/x-parquet",
                includes=table.glob,
            )
            distribution.append(file_set)
            source = {"fileSet": {"@id": file_set["@id"]}}
        schema = pq.read_schema(release_dir / parts[0]["path"])
        for part in parts[1:]:
            if not pq.read_schema(release_dir / part["path"]).equals(schema):
                raise ValueError(f"{part['path']}: schema differs from {parts[0]['path']}")
        fields = [
            _field(
                f"{table.name}/{col.name}",
                col.name,
                col.type,
                {**source, "extract": {"column": col.name}},
            )
            for col in schema
        ]
        record_sets.append(
            _node("cr:RecordSet", table.name, description=table.description, field=fields)
        )
    # Files in other programs' layouts, described by the card, travel as files: tkg/'s text
    # files (RE-Net's headerless layout) and openforecast/'s JSON Lines.
    distribution += [
        _file(f, fmt)
        for f in sorted(files, key=lambda f: f["path"])
        for prefix, fmt in (
            ("tkg/", "text/tab-separated-values"),
            ("openforecast/", "application/jsonlines"),
        )  # fmt: skip
        if f["path"].startswith(prefix)
    ]
    dataset = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": meta["name"],
        "description": meta["description"],
        "license": license_url(meta["license"]),
        "url": meta["url"],
        "version": meta["version"],
        "datePublished": meta["date_published"],
        "citeAs": meta["citation"],
        "creator": {"@type": "sc:Organization", "name": meta["creator"]},
        "distribution": distribution,
        "recordSet": record_sets,
    }
    return {key: value for key, value in dataset.items() if value is not None}
