-- The (subject, object) country pairs with the most quads in a date range.
SELECT head, tail, count(*) AS quads, count(DISTINCT relation) AS relations,
    sum(n_records) AS records
FROM quads
WHERE date BETWEEN $first_date AND $last_date
GROUP BY ALL
ORDER BY quads DESC, head, tail
LIMIT $top
