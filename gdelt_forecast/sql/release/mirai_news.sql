-- MIRAI's data_news.csv: the kept documents of the release's history.
SELECT
    doc_id AS Docid,
    url_md5 AS MD5,
    url AS URL,
    strftime(date, '%Y-%m-%d') AS Date,
    title AS Title,
    text AS Text,
    abstract AS Abstract
FROM news
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, doc_id
