-- A window's news (a month's, as the warehouse writes them): kept documents dated in it (a
-- document is dated by the earliest day one of its URLs is a source on).
SELECT *
FROM news
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, doc_id
