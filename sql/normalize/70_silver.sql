-- The kept records as full bronze rows plus what normalization derived; `kept` holds the
-- survivors of every rule, identified by their bronze file and row.
SELECT
    b.* EXCLUDE (filename, file_row_number),
    k.date,
    k.head,
    k.relation,
    k.tail,
    k.quad_id,
    k.daily_mentions
FROM kept AS k
JOIN bronze_events AS b USING (filename, file_row_number)
ORDER BY k.date, k.quad_id, b.GLOBALEVENTID, b.filename, b.file_row_number
