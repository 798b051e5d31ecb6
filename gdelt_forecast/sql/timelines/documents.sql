-- The kept documents of a window with the GDELT structure behind them: each document's
-- main country pair (unordered, the pair of most of its quads) and its main quad (the one
-- with the most daily mentions), with the quad's relation and most frequent action place.
WITH links AS (
    SELECT d.doc_id, q.quad_id, q.head, q.relation, q.tail, q.daily_mentions,
        least(q.head, q.tail) AS country_a, greatest(q.head, q.tail) AS country_b
    FROM quad_docs AS d
    JOIN quads AS q USING (quad_id)
    WHERE d.date BETWEEN $first_date AND $last_date
),
pairs AS (
    SELECT doc_id, country_a, country_b
    FROM links
    GROUP BY doc_id, country_a, country_b
    QUALIFY row_number() OVER (
        PARTITION BY doc_id ORDER BY count(*) DESC, country_a, country_b
    ) = 1
),
main AS (
    SELECT l.doc_id, l.quad_id, l.head, l.relation, l.tail
    FROM links AS l
    JOIN pairs AS p USING (doc_id, country_a, country_b)
    QUALIFY row_number() OVER (
        PARTITION BY l.doc_id ORDER BY l.daily_mentions DESC, l.quad_id
    ) = 1
),
places AS (
    SELECT quad_id, mode(ActionGeo_FullName ORDER BY ActionGeo_FullName) AS location
    FROM events
    WHERE quad_id IN (SELECT quad_id FROM main) AND ActionGeo_FullName IS NOT NULL
    GROUP BY quad_id
)
SELECT
    n.doc_id,
    n.date,
    n.title,
    left(n.text, $lead_chars) AS lead,
    left(n.text, $article_chars) AS article,
    p.country_a,
    p.country_b,
    s.name AS subject,
    r.name AS event_type,
    o.name AS object,
    pl.location
FROM news AS n
JOIN pairs AS p USING (doc_id)
JOIN main AS m USING (doc_id)
LEFT JOIN countries AS s ON s.iso3 = m.head
LEFT JOIN countries AS o ON o.iso3 = m.tail
LEFT JOIN relations AS r ON r.code = m.relation
LEFT JOIN places AS pl USING (quad_id)
WHERE n.date BETWEEN $first_date AND $last_date
ORDER BY p.country_a, p.country_b, n.date, n.doc_id
