-- One row per quad (date, head, relation, tail): its daily mentions and how many GDELT
-- records, events and source URLs stand behind it.
SELECT
    date,
    head,
    relation,
    tail,
    quad_id,
    max(daily_mentions) AS daily_mentions,
    count(*) AS n_records,
    count(DISTINCT GLOBALEVENTID) AS n_events,
    count(DISTINCT SOURCEURL) AS n_urls
FROM events
GROUP BY ALL
ORDER BY date, quad_id
