-- The strict collection of a month: quads with enough daily mentions and enough kept
-- documents (MIRAI: at least 100 and at least 5), with the countries' names and regions.
SELECT
    q.date,
    q.head,
    q.relation,
    q.tail,
    q.daily_mentions,
    q.n_docs
FROM quads AS q
WHERE q.date BETWEEN $first_date AND $last_date
    AND q.daily_mentions >= $min_daily_mentions
    AND q.n_docs >= $min_documents
