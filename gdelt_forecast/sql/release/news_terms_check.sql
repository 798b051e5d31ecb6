-- news_terms rows that do not describe the release's news: an article without terms, terms
-- of no article, an article whose rows disagree (not one first term, counts that do not add
-- up to its length, a date not its article's), or a length that is not its text's.
WITH per_doc AS (
    SELECT doc_id, count(*) FILTER (WHERE first = 0) AS firsts, sum(tf) AS tf_sum,
           min(tokens) AS tokens, max(tokens) AS max_tokens, min(date) AS first_date,
           max(date) AS last_date
    FROM news_terms
    GROUP BY doc_id
),
articles AS (
    SELECT doc_id, date,
           len(string_split(coalesce(title, '') || ' ' || coalesce(text, ''), ' ')) AS tokens
    FROM news
),
problems AS (
    SELECT doc_id, 'an article without terms' AS problem
    FROM articles ANTI JOIN per_doc USING (doc_id)
    UNION ALL
    SELECT doc_id, 'terms of no article of news' AS problem
    FROM per_doc ANTI JOIN articles USING (doc_id)
    UNION ALL
    SELECT doc_id, 'rows that disagree on the article' AS problem
    FROM per_doc
    WHERE firsts <> 1 OR tokens <> max_tokens OR tf_sum <> tokens OR first_date <> last_date
    UNION ALL
    SELECT doc_id, 'a length or date that is not its article''s' AS problem
    FROM per_doc AS p JOIN articles AS a USING (doc_id)
    WHERE p.tokens <> a.tokens OR p.first_date <> a.date
)
SELECT 'news_terms' AS tbl, problem, count(*) AS rows, min(doc_id) AS example
FROM problems
GROUP BY ALL
ORDER BY ALL
