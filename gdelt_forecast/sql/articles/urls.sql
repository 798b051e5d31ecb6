-- The source URLs of the days' silver events, each with the first day it is a source on
-- (the URLs of warehouse/quad_urls.sql, before the warehouse is built).
SELECT SOURCEURL AS url, min(date) AS date
FROM read_parquet($parts, hive_partitioning = false)
WHERE SOURCEURL IS NOT NULL
GROUP BY url
ORDER BY url
