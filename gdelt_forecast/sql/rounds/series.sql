-- Every count a round's questions read, per chosen pair (`chosen`: subject, object) and
-- series: 'any' (all its events), 'class<q>' (CAMEO's quad class q, 1-4) and 'code<cc>' (a
-- first-level relation), over the observed days (`observed`: the days of the history that
-- the data root holds). An event is a distinct GLOBALEVENTID.
--   days, active_days: observed days, and those with at least one event;
--   total, recent: events in the history, and in its recent window (from recent_start);
--   daily_mean: total / days;
--   above_share: among the windows of window_days days ending on each observed day, the
--     share whose count, scaled to the window's length over its observed days, exceeds
--     window_days * daily_mean (a window's mean count, when every day is held);
--   any_share: the share of those windows with at least one event;
--   last_scaled, last_count: the last of those windows' scaled and plain counts (what the
--     history forecaster carries forward).
WITH events AS (
    SELECT DISTINCT h.date, h.head AS subject, h.tail AS object, h.GLOBALEVENTID,
        left(h.relation, 2) AS first_level
    FROM history AS h
    JOIN chosen AS c ON h.head = c.subject AND h.tail = c.object
    WHERE h.date >= $history_start
),
tagged AS (
    SELECT subject, object, 'any' AS series, date, GLOBALEVENTID FROM events
    UNION ALL
    SELECT e.subject, e.object, 'class' || r.quad_class, e.date, e.GLOBALEVENTID
    FROM events AS e
    JOIN relations AS r ON r.code = e.first_level
    UNION ALL
    SELECT subject, object, 'code' || first_level, date, GLOBALEVENTID FROM events
),
keys AS (
    -- the four classes and 'any' for every pair, even where it had none of them
    SELECT c.subject, c.object, s.series
    FROM chosen AS c
    CROSS JOIN (VALUES ('any'), ('class1'), ('class2'), ('class3'), ('class4')) AS s (series)
    UNION
    SELECT DISTINCT subject, object, series FROM tagged
),
daily AS (
    SELECT subject, object, series, date, count(DISTINCT GLOBALEVENTID) AS n
    FROM tagged
    GROUP BY ALL
),
grid AS (
    SELECT k.subject, k.object, k.series, o.day AS date, coalesce(d.n, 0) AS n
    FROM keys AS k
    CROSS JOIN observed AS o
    LEFT JOIN daily AS d
        ON d.subject = k.subject AND d.object = k.object AND d.series = k.series
        AND d.date = o.day
),
windows AS (
    SELECT
        *,
        sum(n) OVER w AS window_n,
        count(*) OVER w AS held_days,
        sum(n) OVER p / count(*) OVER p AS daily_mean
    FROM grid
    WINDOW
        w AS (
            PARTITION BY subject, object, series ORDER BY date
            RANGE BETWEEN INTERVAL ($window_days - 1) DAYS PRECEDING AND CURRENT ROW
        ),
        p AS (PARTITION BY subject, object, series)
)
SELECT
    subject,
    object,
    series,
    count(*) AS days,
    count(*) FILTER (WHERE n > 0) AS active_days,
    CAST(sum(n) AS BIGINT) AS total,
    CAST(coalesce(sum(n) FILTER (WHERE date >= $recent_start), 0) AS BIGINT) AS recent,
    any_value(daily_mean) AS daily_mean,
    avg(CAST(window_n * $window_days / held_days > $window_days * daily_mean AS INTEGER))
        AS above_share,
    avg(CAST(window_n > 0 AS INTEGER)) AS any_share,
    arg_max(window_n * $window_days / held_days, date) AS last_scaled,
    CAST(arg_max(window_n, date) AS BIGINT) AS last_count
FROM windows
GROUP BY subject, object, series
ORDER BY subject, object, series
