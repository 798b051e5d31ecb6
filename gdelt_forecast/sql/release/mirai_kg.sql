-- MIRAI's data_kg.csv: one row per (quad, kept document) of the release's history, with
-- MIRAI's column names and string forms (QuadEventCode "2023-11-03, AUS, 042, CHN"), sorted
-- so that a quad's rows come together and by Docid. Its last column, Docids (the quad's
-- documents as a Python list literal, which MIRAI's code reads back with eval), is added
-- while writing (gdelt_forecast/testset/mirai_compat.py).
WITH linked AS (
    SELECT
        strftime(q.date, '%Y-%m-%d') AS DateStr,
        q.head AS Actor1CountryCode,
        q.tail AS Actor2CountryCode,
        q.relation AS EventBaseCode,
        c1.name AS Actor1CountryName,
        c2.name AS Actor2CountryName,
        r.name AS RelName,
        d.doc_id AS Docid
    FROM quad_docs AS d
    JOIN quads AS q USING (quad_id)
    LEFT JOIN countries AS c1 ON c1.iso3 = q.head
    LEFT JOIN countries AS c2 ON c2.iso3 = q.tail
    LEFT JOIN relations AS r ON r.code = q.relation
    WHERE q.date BETWEEN $first_date AND $last_date
)
SELECT
    DateStr, Actor1CountryCode, Actor2CountryCode, EventBaseCode, Actor1CountryName,
    Actor2CountryName, RelName,
    concat_ws(', ', DateStr, Actor1CountryCode, EventBaseCode, Actor2CountryCode)
        AS QuadEventCode,
    concat_ws(', ', DateStr, Actor1CountryName, RelName, Actor2CountryName) AS QuadEventName,
    Docid
FROM linked
ORDER BY DateStr, QuadEventCode, Docid
