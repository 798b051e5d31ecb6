-- Rules 5 and 6: the daily mentions of each quad (date, head, relation, tail), and the
-- database threshold events.min_daily_mentions.
--   distinct_sources (MIRAI paper): distinct MentionSourceName among the mentions, made on
--     the quad's date, of any of its GLOBALEVENTIDs. Mentions on later days (late coverage
--     of an older event) count towards the day they were made, never back to the event's day.
--   sum_num_mentions (MIRAI release code): the sum of NumMentions of the quad's records.
WITH quad_events AS (
    SELECT DISTINCT date, head, relation, tail, GLOBALEVENTID FROM rule_input
),
sources AS (
    SELECT q.date, q.head, q.relation, q.tail, count(DISTINCT m.MentionSourceName) AS n
    FROM quad_events AS q
    JOIN bronze_mentions AS m
        ON m.GLOBALEVENTID = q.GLOBALEVENTID
        AND m.MentionTimeDate // 1000000 = CAST(strftime(q.date, '%Y%m%d') AS BIGINT)
    GROUP BY ALL
),
num_mentions AS (
    SELECT date, head, relation, tail, CAST(sum(NumMentions) AS BIGINT) AS n
    FROM rule_input
    GROUP BY ALL
),
counted AS (
    SELECT
        r.*,
        CASE $metric
            WHEN 'distinct_sources' THEN coalesce(s.n, 0)
            ELSE coalesce(nm.n, 0)
        END AS daily_mentions
    FROM rule_input AS r
    LEFT JOIN sources AS s USING (date, head, relation, tail)
    LEFT JOIN num_mentions AS nm USING (date, head, relation, tail)
)
SELECT
    *,
    strftime(date, '%Y-%m-%d') || '_' || head || '_' || relation || '_' || tail AS quad_id,
    CASE
        WHEN daily_mentions < $min_daily_mentions THEN
            CASE WHEN daily_mentions = 0 THEN 'no daily mentions'
            ELSE 'fewer than ' || $min_daily_mentions || ' daily mentions' END
    END AS reason
FROM counted
