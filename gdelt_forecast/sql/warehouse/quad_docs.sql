-- Links from each quad of the month to the kept documents behind its source URLs (any day's
-- documents up to the month's end: a URL's document lies on the day it was first fetched).
SELECT DISTINCT q.quad_id, q.date, d.doc_id
FROM quad_urls AS q
JOIN article_docs AS d ON d.url = q.url
ORDER BY q.quad_id, d.doc_id
