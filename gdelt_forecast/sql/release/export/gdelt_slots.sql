-- The GDELT source files the window's events and mentions could come from: every slot
-- from the URL look-back window's first day to the window's last, whatever its outcome.
SELECT *
FROM read_parquet($ledger)
WHERE CAST(strptime(left(slot, 8), '%Y%m%d') AS DATE) BETWEEN $lookback_date AND $last_date
ORDER BY slot, stream, "table"
