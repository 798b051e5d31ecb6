"""Column names and types of the GDELT 2.0 export (events) and mentions tables.

Names follow the GDELT 2.0 codebooks. IDs, counts and dates are numeric; CAMEO codes,
country codes, ADM codes and FeatureIDs stay strings so leading zeros survive ("010").
"""

from __future__ import annotations

import pyarrow as pa

_ACTOR = [
    ("Code", pa.string()),
    ("Name", pa.string()),
    ("CountryCode", pa.string()),
    ("KnownGroupCode", pa.string()),
    ("EthnicCode", pa.string()),
    ("Religion1Code", pa.string()),
    ("Religion2Code", pa.string()),
    ("Type1Code", pa.string()),
    ("Type2Code", pa.string()),
    ("Type3Code", pa.string()),
]
_GEO = [
    ("Type", pa.int8()),
    ("FullName", pa.string()),
    ("CountryCode", pa.string()),
    ("ADM1Code", pa.string()),
    ("ADM2Code", pa.string()),
    ("Lat", pa.float64()),
    ("Long", pa.float64()),
    ("FeatureID", pa.string()),
]

EXPORT = pa.schema(
    [
        ("GLOBALEVENTID", pa.int64()),
        ("SQLDATE", pa.int32()),
        ("MonthYear", pa.int32()),
        ("Year", pa.int16()),
        ("FractionDate", pa.float64()),
        *[(f"Actor1{name}", typ) for name, typ in _ACTOR],
        *[(f"Actor2{name}", typ) for name, typ in _ACTOR],
        ("IsRootEvent", pa.int8()),
        ("EventCode", pa.string()),
        ("EventBaseCode", pa.string()),
        ("EventRootCode", pa.string()),
        ("QuadClass", pa.int8()),
        ("GoldsteinScale", pa.float64()),
        ("NumMentions", pa.int32()),
        ("NumSources", pa.int32()),
        ("NumArticles", pa.int32()),
        ("AvgTone", pa.float64()),
        *[(f"Actor1Geo_{name}", typ) for name, typ in _GEO],
        *[(f"Actor2Geo_{name}", typ) for name, typ in _GEO],
        *[(f"ActionGeo_{name}", typ) for name, typ in _GEO],
        ("DATEADDED", pa.int64()),
        ("SOURCEURL", pa.string()),
    ]
)

MENTIONS = pa.schema(
    [
        ("GLOBALEVENTID", pa.int64()),
        ("EventTimeDate", pa.int64()),
        ("MentionTimeDate", pa.int64()),
        ("MentionType", pa.int8()),
        ("MentionSourceName", pa.string()),
        ("MentionIdentifier", pa.string()),
        ("SentenceID", pa.int32()),
        ("Actor1CharOffset", pa.int32()),
        ("Actor2CharOffset", pa.int32()),
        ("ActionCharOffset", pa.int32()),
        ("InRawText", pa.int8()),
        ("Confidence", pa.int16()),
        ("MentionDocLen", pa.int32()),
        ("MentionDocTone", pa.float64()),
        ("MentionDocTranslationInfo", pa.string()),
        ("Extras", pa.string()),
    ]
)

SCHEMAS: dict[str, pa.Schema] = {"export": EXPORT, "mentions": MENTIONS}

# Bronze directory per table, and the YYYYMMDDHHMMSS column that picks a row's partition.
BRONZE_DIR = {"export": "events", "mentions": "mentions"}
PARTITION_COLUMN = {"export": "DATEADDED", "mentions": "MentionTimeDate"}
# Rows without these cannot be placed or joined, so they go to rejects.
REQUIRED = {
    "export": ("GLOBALEVENTID", "DATEADDED"),
    "mentions": ("GLOBALEVENTID", "MentionTimeDate"),
}

REJECTS = pa.schema(
    [
        ("source_file", pa.string()),
        ("line_no", pa.int64()),
        ("raw_line", pa.string()),
        ("reason", pa.string()),
    ]
)
