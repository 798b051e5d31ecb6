-- Per complex event: its documents and the atomic events of its timeline (and how many of
-- them carry a date).
SELECT
    c.complex_event_id,
    c.title,
    c.countries,
    c.first_date,
    c.n_documents,
    count(t.seq) AS atomic_events,
    count(t.date) AS dated_events
FROM complex_events AS c
LEFT JOIN timelines AS t USING (complex_event_id)
GROUP BY ALL
ORDER BY c.first_date, c.complex_event_id
