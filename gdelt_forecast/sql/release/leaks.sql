-- Test rows that break the leakage rule: dated outside the test month, a cutoff that is
-- not before the query date by exactly its horizon, or a subset row that is not a query.
WITH tested AS (
    SELECT 'queries' AS tbl, query_id, date, cutoff, horizon FROM queries
    UNION ALL
    SELECT 'subset' AS tbl, query_id, date, cutoff, horizon FROM subset
),
problems AS (
    SELECT tbl, query_id, 'dated outside the test month' AS problem
    FROM tested
    WHERE date NOT BETWEEN $first AND $last
    UNION ALL
    SELECT tbl, query_id, 'cutoff not before the date by its horizon' AS problem
    FROM tested
    WHERE NOT (cutoff < date AND date - cutoff = horizon)
    UNION ALL
    SELECT 'subset' AS tbl, query_id, 'not among the queries' AS problem
    FROM subset
    WHERE query_id NOT IN (SELECT query_id FROM queries)
)
SELECT tbl, problem, count(*) AS rows, min(query_id) AS example
FROM problems
GROUP BY ALL
ORDER BY ALL
