-- The normalization funnel of a window's days (a month's, as the warehouse writes them): one
-- row per day and rule.
SELECT *
FROM funnel
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, step
