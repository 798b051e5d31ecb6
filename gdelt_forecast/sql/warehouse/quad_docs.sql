-- Links from each quad to the kept documents behind its source URLs.
SELECT DISTINCT q.quad_id, q.date, d.doc_id
FROM quad_urls AS q
JOIN article_docs AS d ON d.url = q.url
ORDER BY q.quad_id, d.doc_id
