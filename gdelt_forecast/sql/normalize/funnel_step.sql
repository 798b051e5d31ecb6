-- One funnel row per day for the rule just applied to `tagged` (reason NULL = kept):
-- rows in, rows out, rows removed and the most frequent reasons.
WITH days AS (
    SELECT CAST(unnest(generate_series(CAST($first_date AS DATE), CAST($last_date AS DATE),
        INTERVAL 1 DAY)) AS DATE) AS date
),
counts AS (
    SELECT date, count(*) AS rows_in, count(*) FILTER (WHERE reason IS NULL) AS rows_out
    FROM tagged
    GROUP BY date
),
reasons AS (
    SELECT date, reason, count(*) AS rows FROM tagged WHERE reason IS NOT NULL GROUP BY ALL
),
top AS (
    SELECT
        date,
        list({'reason': reason, 'rows': rows} ORDER BY rows DESC, reason)[1:$top_reasons]
            AS top_reasons
    FROM reasons
    GROUP BY date
)
SELECT
    days.date,
    CAST($step AS INTEGER) AS step,
    CAST($rule AS VARCHAR) AS rule,
    CAST($enabled AS BOOLEAN) AS enabled,
    coalesce(counts.rows_in, 0) AS rows_in,
    coalesce(counts.rows_out, 0) AS rows_out,
    coalesce(counts.rows_in - counts.rows_out, 0) AS removed,
    coalesce(top.top_reasons, []) AS top_reasons
FROM days
LEFT JOIN counts USING (date)
LEFT JOIN top USING (date)
ORDER BY days.date
