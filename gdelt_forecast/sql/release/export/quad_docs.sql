-- Links from the window's quads to their kept documents.
SELECT *
FROM quad_docs
WHERE date BETWEEN $first_date AND $last_date
ORDER BY quad_id, doc_id
