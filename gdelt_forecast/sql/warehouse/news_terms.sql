-- One day's documents of the month's `news` as their terms: title and text joined by one
-- space and split on every single space (Python's `str.split(" ")`, as MIRAI's BM25 search
-- tokenizes, so the empty strings between two spaces are terms too; a missing title counts
-- as empty, where MIRAI's pandas would fail). One row per (document, term): how often it
-- occurs (`tf`), where it first occurs (`first`, 0-based) and how many terms the document
-- has (`tokens`); rows in document order, then by first occurrence.
WITH tokenized AS (
    SELECT doc_id, date,
           string_split(coalesce(title, '') || ' ' || coalesce(text, ''), ' ') AS terms
    FROM news
    WHERE date = $day
),
occurrences AS (
    SELECT doc_id, date, len(terms) AS tokens, unnest(terms) AS term,
           generate_subscripts(terms, 1) - 1 AS position
    FROM tokenized
)
SELECT doc_id, date, term, count(*)::INTEGER AS tf, min(position)::INTEGER AS first,
       any_value(tokens)::INTEGER AS tokens
FROM occurrences
GROUP BY doc_id, date, term
ORDER BY doc_id, first
