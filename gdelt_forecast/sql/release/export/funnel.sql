-- The normalization funnel of the window's days: one row per day and rule.
SELECT *
FROM funnel
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, step
