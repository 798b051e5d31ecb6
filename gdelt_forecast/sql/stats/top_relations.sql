-- The relations with the most quads in a date range.
SELECT q.relation, r.name, count(*) AS quads, sum(q.n_records) AS records
FROM quads AS q
LEFT JOIN relations AS r ON r.code = q.relation
WHERE q.date BETWEEN $first_date AND $last_date
GROUP BY ALL
ORDER BY quads DESC, q.relation
LIMIT $top
