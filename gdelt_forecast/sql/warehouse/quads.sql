-- One row per quad (date, head, relation, tail): its daily mentions, how many GDELT
-- records, events and source URLs stand behind it, and how many kept documents (n_docs,
-- which the test set's "at least 5 downloaded articles" reads).
WITH docs AS (
    SELECT quad_id, count(DISTINCT doc_id) AS n_docs FROM quad_docs GROUP BY quad_id
)
SELECT
    e.date,
    e.head,
    e.relation,
    e.tail,
    e.quad_id,
    max(e.daily_mentions) AS daily_mentions,
    count(*) AS n_records,
    count(DISTINCT e.GLOBALEVENTID) AS n_events,
    count(DISTINCT e.SOURCEURL) AS n_urls,
    coalesce(any_value(docs.n_docs), 0) AS n_docs
FROM events AS e
LEFT JOIN docs USING (quad_id)
GROUP BY e.date, e.head, e.relation, e.tail, e.quad_id
ORDER BY e.date, e.quad_id
