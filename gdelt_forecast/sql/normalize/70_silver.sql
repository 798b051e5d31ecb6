-- The kept records as full bronze rows plus what normalization derived; `kept` holds the
-- survivors of every rule, identified by their bronze file and row.
SELECT
    b.* EXCLUDE (file_index, file_row_number),
    k.date,
    k.head,
    k.relation,
    k.tail,
    k.quad_id,
    k.daily_mentions
FROM kept AS k
JOIN bronze_events AS b USING (file_index, file_row_number)
ORDER BY k.date, k.quad_id, b.GLOBALEVENTID, b.file_index, b.file_row_number
