-- One row per kept document: exact duplicate texts (same doc_id) collapse into one, dated
-- by the earliest day any of their URLs is a source on, with MIRAI's url and url_md5 taken
-- from that first URL.
SELECT * EXCLUDE (rank)
FROM (
    SELECT *, row_number() OVER (PARTITION BY doc_id ORDER BY date, url) AS rank
    FROM article_docs
)
WHERE rank = 1
ORDER BY date, doc_id
