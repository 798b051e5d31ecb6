-- The release's events: the warehouse's kept GDELT records of the history window, in a
-- total order (a record is one row of one slot file) so every build writes the same bytes.
SELECT *
FROM events
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, quad_id, GLOBALEVENTID, _slot, _source_file
