-- A month's files of one of the warehouse's tables, less the days before a release's history
-- starts within the month, in the files' own order (DuckDB keeps a scan's order).
SELECT *
FROM read_parquet($files)
WHERE date BETWEEN $first_date AND $last_date
