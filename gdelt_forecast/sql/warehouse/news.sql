-- One row per kept document first seen in the month: exact duplicate texts (same doc_id)
-- collapse into one, dated by the earliest day any of their URLs is a source on, with
-- MIRAI's url and url_md5 taken from that first URL. A document an earlier month holds
-- (`earlier_news`: the doc_ids of the earlier months' news) stays that month's, so over the
-- months each document is one row, as it would be were the history built whole.
SELECT * EXCLUDE (rank)
FROM (
    SELECT d.*, row_number() OVER (PARTITION BY d.doc_id ORDER BY d.date, d.url) AS rank
    FROM article_docs AS d
    ANTI JOIN earlier_news AS e ON d.doc_id = e.doc_id
    WHERE d.date BETWEEN $first_date AND $last_date
)
WHERE rank = 1
ORDER BY date, doc_id
