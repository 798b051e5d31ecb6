-- Headline counts of a release for its dataset card.
SELECT
    (SELECT count(*) FROM events) AS events,
    (SELECT count(*) FROM quads) AS quads,
    (SELECT count(*) FROM news) AS documents,
    (SELECT count(*) FROM quad_docs) AS quad_doc_links,
    (SELECT count(DISTINCT (head, tail)) FROM quads) AS pairs,
    (SELECT count(DISTINCT c) FROM (SELECT head AS c FROM quads UNION SELECT tail FROM quads))
        AS countries,
    (SELECT count(DISTINCT left(relation, 2)) FROM quads) AS relations_level1,
    (SELECT count(DISTINCT relation) FROM quads) AS relations_level2
