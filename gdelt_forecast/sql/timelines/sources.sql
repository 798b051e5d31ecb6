-- The whole title and text of the documents a model's atomic events cite, with the day GDELT
-- first saw each: what rule 6 (grounding) holds those events to.
SELECT doc_id, date, title, text
FROM news
WHERE list_contains($doc_ids, doc_id)
