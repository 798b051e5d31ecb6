-- The (subject, object) country pairs with the most quads in a date range.
SELECT q.head, h.name AS head_name, q.tail, t.name AS tail_name, count(*) AS quads,
    count(DISTINCT q.relation) AS relations, sum(q.n_records) AS records
FROM quads AS q
LEFT JOIN countries AS h ON h.iso3 = q.head
LEFT JOIN countries AS t ON t.iso3 = q.tail
WHERE q.date BETWEEN $first_date AND $last_date
GROUP BY ALL
ORDER BY quads DESC, q.head, q.tail
LIMIT $top
