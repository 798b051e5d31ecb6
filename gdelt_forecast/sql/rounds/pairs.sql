-- A round's candidate pairs: each ordered (subject, object) pair's active days and events in
-- the recent window before the open date, the most active first (ties by events, then by
-- the countries' codes, so that the same history always gives the same candidates).
SELECT
    head AS subject,
    tail AS object,
    count(DISTINCT date) AS active_days,
    count(DISTINCT GLOBALEVENTID) AS events
FROM history
WHERE date >= $recent_start
GROUP BY head, tail
ORDER BY active_days DESC, events DESC, subject, object
LIMIT $candidates
