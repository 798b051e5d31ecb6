-- Rule 1b (events.earliest_url_date): a SOURCEURL keeps only its earliest date. A record is
-- dropped when the same URL was published (and passed rule 1a) on an earlier day within
-- events.url_lookback_days; the look-back is fixed so each day's result never depends on
-- which range it was normalized with.
WITH url_days AS (
    SELECT DISTINCT
        SOURCEURL,
        DATEADDED // 1000000 AS day,
        strptime(CAST(DATEADDED // 1000000 AS VARCHAR), '%Y%m%d')::DATE AS date
    FROM bronze_events
    WHERE SOURCEURL IS NOT NULL AND (NOT $same_day OR SQLDATE = DATEADDED // 1000000)
),
previous AS (
    SELECT
        SOURCEURL,
        date,
        lag(date) OVER (PARTITION BY SOURCEURL ORDER BY date) AS previous_date
    FROM url_days
)
SELECT
    -- Later rules never read the URL (silver takes it from bronze): stop carrying it.
    r.* EXCLUDE (SOURCEURL),
    CASE
        WHEN $enabled AND p.previous_date >= r.date - to_days(CAST($lookback_days AS INTEGER)) THEN
            'URL already published ' || date_diff('day', p.previous_date, r.date) || ' day(s) earlier'
    END AS reason
FROM rule_input AS r
LEFT JOIN previous AS p ON p.SOURCEURL = r.SOURCEURL AND p.date = r.date
