-- The source URLs of each quad, for the article stage.
SELECT quad_id, date, SOURCEURL AS url, count(*) AS n_records
FROM events
WHERE SOURCEURL IS NOT NULL
GROUP BY ALL
ORDER BY quad_id, url
