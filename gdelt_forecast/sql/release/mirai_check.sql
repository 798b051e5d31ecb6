-- MIRAI's database files against the release's tables, whose dates the leakage checks hold
-- to the history: a line of data_news.csv that is no article of news on its first-seen day,
-- or an article without its line; a line of data_kg.csv that is no (quad, document) of
-- quad_docs, a pair without its line, or a quad whose Docids is not the list of its
-- documents. MIRAI's API cuts its database by date only, so any line from outside the
-- release's rows would be shown to an agent as history.
WITH kg AS (
    SELECT DateStr, Actor1CountryCode AS head, EventBaseCode AS relation,
           Actor2CountryCode AS tail, Docid
    FROM data_kg
),
pairs AS (
    SELECT strftime(q.date, '%Y-%m-%d') AS DateStr, q.head, q.relation, q.tail,
           d.doc_id AS Docid
    FROM quad_docs AS d
    JOIN quads AS q USING (quad_id)
),
lists AS (
    SELECT QuadEventCode, count(DISTINCT Docids) AS lists, any_value(Docids) AS got,
           '[' || string_agg('''' || Docid || '''', ', ' ORDER BY Docid) || ']' AS want
    FROM data_kg
    GROUP BY QuadEventCode
),
articles AS (
    SELECT doc_id AS Docid, strftime(date, '%Y-%m-%d') AS Date FROM news
),
problems AS (
    SELECT 'data_kg' AS tbl, 'a line that is no (quad, document) of quad_docs' AS problem,
           concat_ws(' ', DateStr, head, relation, tail, Docid) AS example
    FROM (SELECT * FROM kg EXCEPT ALL SELECT * FROM pairs)
    UNION ALL
    SELECT 'data_kg', 'a (quad, document) of quad_docs without its line',
           concat_ws(' ', DateStr, head, relation, tail, Docid)
    FROM (SELECT * FROM pairs EXCEPT ALL SELECT * FROM kg)
    UNION ALL
    SELECT 'data_kg', 'a quad whose Docids is not the list of its documents', QuadEventCode
    FROM lists
    WHERE lists > 1 OR got <> want
    UNION ALL
    SELECT 'data_news', 'a line that is no article of news on its first-seen day',
           concat_ws(' ', Docid, Date)
    FROM (SELECT Docid, Date FROM data_news EXCEPT ALL SELECT * FROM articles)
    UNION ALL
    SELECT 'data_news', 'an article of news without its line', concat_ws(' ', Docid, Date)
    FROM (SELECT * FROM articles EXCEPT ALL SELECT Docid, Date FROM data_news)
)
SELECT tbl, problem, count(*) AS rows, min(example) AS example
FROM problems
GROUP BY ALL
ORDER BY ALL
