-- A window's quads (a month's, as the warehouse writes them): one row per (date, head,
-- relation, tail).
SELECT *
FROM quads
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, quad_id
