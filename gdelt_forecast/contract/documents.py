"""Columns of the article stage's outputs, which the warehouse reads too."""

import pyarrow as pa

# The OBELICS filter values, by the names `articles explain` prints (obelics.FILTERS).
FILTERS = (
    "words",
    "char_repetition",
    "word_repetition",
    "special_characters",
    "stopwords",
    "flagged_words",
    "punctuation",
    "lang",
    "lang_score",
)
# Every filter a verdict names, so every `filter` of the exclusions but the stages before
# (fetch, extraction): the filters above, the optional document-level perplexity check, and
# "no paragraph kept" for a document whose paragraphs all failed.
CHECKS = (*FILTERS, "perplexity", "no paragraph kept")
VALUES = [(name, pa.string() if name == "lang" else pa.float64()) for name in FILTERS]
DOCS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("url", pa.string()),
        ("url_md5", pa.string()),
        ("date", pa.date32()),
        ("title", pa.string()),
        ("text", pa.string()),
        ("abstract", pa.string()),
        ("published", pa.string()),
        ("preset", pa.string()),
        *VALUES,
    ]
)
EXCLUSIONS = pa.schema(
    [
        ("url", pa.string()),
        ("date", pa.date32()),
        ("level", pa.string()),  # "document" or "paragraph"
        ("paragraph", pa.int32()),  # index among the extracted paragraphs; null for documents
        ("text", pa.string()),
        ("filter", pa.string()),  # one of CHECKS, or the stage (fetch, extraction) that removed it
        ("value", pa.string()),
        ("reason", pa.string()),
        ("preset", pa.string()),
    ]
)
