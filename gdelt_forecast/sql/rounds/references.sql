-- What the reference forecasters of a round read from its history, one row per source:
--   'pair': each chosen pair's second-level relations since $recent_start (the history
--     forecaster's, as the release's baseline reads a pair's last days);
--   'top': the $top most frequent relations of every event in the history, whoever took
--     part (the frequency forecaster's, as MIRAI's), in the order of their events.
SELECT 'pair' AS source, c.subject, c.object,
    list(DISTINCT h.relation ORDER BY h.relation) FILTER (WHERE h.relation IS NOT NULL)
        AS relations
FROM chosen AS c
LEFT JOIN history AS h
    ON h.head = c.subject AND h.tail = c.object AND h.date >= $recent_start
GROUP BY c.subject, c.object
UNION ALL
SELECT 'top', NULL, NULL, list(relation ORDER BY n DESC, relation)
FROM (
    SELECT relation, count(DISTINCT GLOBALEVENTID) AS n
    FROM history
    GROUP BY relation
    ORDER BY n DESC, relation
    LIMIT $top
)
