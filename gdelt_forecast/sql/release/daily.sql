-- GDELT records, quads and kept news documents per day. The days run from the first to the
-- last day any table has (the funnel has a row for every normalized day), so a day without
-- data shows as zeros instead of vanishing from the plot.
WITH days AS (
    SELECT CAST(unnest(generate_series(min(date), max(date), INTERVAL 1 DAY)) AS DATE) AS date
    FROM (
        SELECT date FROM events
        UNION ALL SELECT date FROM news
        UNION ALL SELECT date FROM funnel
    )
),
e AS (SELECT date, count(*) AS events FROM events GROUP BY date),
q AS (SELECT date, count(*) AS quads FROM quads GROUP BY date),
n AS (SELECT date, count(*) AS documents FROM news GROUP BY date)
SELECT days.date, coalesce(e.events, 0) AS events, coalesce(q.quads, 0) AS quads,
    coalesce(n.documents, 0) AS documents
FROM days
LEFT JOIN e USING (date)
LEFT JOIN q USING (date)
LEFT JOIN n USING (date)
ORDER BY days.date
