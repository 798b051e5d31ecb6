-- A window's events (a month's, as the warehouse writes them; a release's first month when
-- its history starts within it): the kept GDELT records, in a total order (a record is one
-- row of one slot file) so every build writes the same bytes.
SELECT *
FROM events
WHERE date BETWEEN $first_date AND $last_date
ORDER BY date, quad_id, GLOBALEVENTID, _slot, _source_file
