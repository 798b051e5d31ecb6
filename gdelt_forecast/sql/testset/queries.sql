-- One query (t, s, ?, o) per (date, subject, object) of the strict collection. Its answer
-- is every second-level relation of the pair that day, drawn from the strict collection
-- (the paper) or from every database quad of the month (`answer_source: database`, the
-- MIRAI release code).
WITH pairs AS (
    SELECT date, head, tail, max(daily_mentions) AS daily_mentions, min(n_docs) AS min_docs
    FROM candidates
    GROUP BY date, head, tail
),
answers AS (
    SELECT date, head, tail, list(DISTINCT relation ORDER BY relation) AS answer_list
    FROM (
        SELECT date, head, relation, tail FROM candidates WHERE $answer_source = 'strict'
        UNION ALL
        SELECT date, head, relation, tail FROM quads
        WHERE $answer_source = 'database' AND date BETWEEN $first_date AND $last_date
    )
    GROUP BY date, head, tail
)
SELECT
    p.date,
    p.head AS subject,
    s.name AS subject_name,
    s.continent AS subject_region,
    s.un_region AS subject_subregion,
    p.tail AS object,
    o.name AS object_name,
    o.continent AS object_region,
    o.un_region AS object_subregion,
    a.answer_list,
    p.daily_mentions,
    p.min_docs
FROM pairs AS p
JOIN answers AS a USING (date, head, tail)
LEFT JOIN countries AS s ON s.iso3 = p.head
LEFT JOIN countries AS o ON o.iso3 = p.tail
ORDER BY p.date, p.head, p.tail
