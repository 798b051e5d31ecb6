-- Records per task and split ($tasks x $splits, in their order, empty ones too), with the
-- complex events and cut dates they come from.
WITH grid AS (
    SELECT task, split, t, s
    FROM unnest($tasks) WITH ORDINALITY AS g1(task, t)
    CROSS JOIN unnest($splits) WITH ORDINALITY AS g2(split, s)
)
SELECT
    grid.task,
    grid.split,
    count(r.id) AS records,
    count(DISTINCT r.complex_event_id) AS complex_events,
    count(DISTINCT r.cut_date) AS cut_dates
FROM grid
LEFT JOIN tasks AS r ON r.task = grid.task AND r.split = grid.split
GROUP BY grid.task, grid.split, grid.t, grid.s
ORDER BY grid.t, grid.s
