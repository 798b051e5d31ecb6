-- Links from a window's quads (a month's, as the warehouse writes them) to their kept
-- documents.
SELECT *
FROM quad_docs
WHERE date BETWEEN $first_date AND $last_date
ORDER BY quad_id, doc_id
