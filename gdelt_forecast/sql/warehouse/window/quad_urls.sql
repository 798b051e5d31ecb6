-- A window's source URLs of each quad (a month's, as the warehouse writes them), for the
-- article stage.
SELECT *
FROM quad_urls
WHERE date BETWEEN $first_date AND $last_date
ORDER BY quad_id, url
