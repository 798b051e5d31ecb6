-- Quads and GDELT records per CAMEO code at level $level (1: the two-digit root of the quad's
-- relation, 2: the relation itself), with each code's share of all quads.
WITH coded AS (
    SELECT CASE WHEN $level = 1 THEN left(relation, 2) ELSE relation END AS code, n_records
    FROM quads
)
SELECT c.code, r.name, count(*) AS quads, sum(c.n_records) AS events,
    round(count(*) / sum(count(*)) OVER (), 6) AS share
FROM coded AS c
LEFT JOIN relations AS r ON r.code = c.code
GROUP BY c.code, r.name
ORDER BY quads DESC, c.code
