-- The release's quads: one row per (date, head, relation, tail) of the history window.
SELECT *
FROM quads
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, quad_id
