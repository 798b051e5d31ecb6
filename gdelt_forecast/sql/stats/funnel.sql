-- The funnel over a date range: each rule's rows in, out and removed, and its top reasons
-- (summed from each day's top list, so a reason rare on every day can be missing).
WITH steps AS (
    SELECT step, rule, bool_and(enabled) AS enabled, sum(rows_in) AS rows_in,
        sum(rows_out) AS rows_out, sum(removed) AS removed
    FROM funnel
    WHERE date BETWEEN $first_date AND $last_date
    GROUP BY step, rule
),
reasons AS (
    SELECT step, r.reason, sum(r.rows) AS rows
    FROM funnel, unnest(top_reasons) AS t(r)
    WHERE date BETWEEN $first_date AND $last_date
    GROUP BY step, r.reason
),
top AS (
    SELECT step, list({'reason': reason, 'rows': rows} ORDER BY rows DESC, reason)[1:$top]
        AS top_reasons
    FROM reasons
    GROUP BY step
)
SELECT steps.*, coalesce(top.top_reasons, []) AS top_reasons
FROM steps
LEFT JOIN top USING (step)
ORDER BY step
