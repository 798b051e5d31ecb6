-- The release's quads as RE-Net / RE-GCN quadruples: s, r, o are ids in the entity list
-- (every ISO code of the reference countries) and the relation list (every second-level
-- CAMEO code), each numbered from 0 in code order, so the ids of one code stay the same
-- from release to release; t is the day index from the history start (0 = its first day);
-- split is test for the test month, valid for the $valid_days days before it, else train.
-- A quad whose code is in neither list comes out with a NULL id, for the caller to refuse.
WITH
    entities AS (
        SELECT iso3 AS name, row_number() OVER (ORDER BY iso3) - 1 AS id FROM countries
    ),
    relation_ids AS (
        SELECT code AS name, row_number() OVER (ORDER BY code) - 1 AS id
        FROM relations
        WHERE length(code) = 3
    )
SELECT
    s.id AS s,
    r.id AS r,
    o.id AS o,
    datediff('day', $history_start, q.date) AS t,
    CASE
        WHEN q.date >= $test_start THEN 'test'
        WHEN q.date >= $test_start - to_days($valid_days) THEN 'valid'
        ELSE 'train'
    END AS split,
    q.quad_id
FROM quads AS q
LEFT JOIN entities AS s ON s.name = q.head
LEFT JOIN relation_ids AS r ON r.name = q.relation
LEFT JOIN entities AS o ON o.name = q.tail
ORDER BY t, s, r, o
