-- Rule 1a (events.same_day): keep a record only if its SQLDATE is the day it was
-- published, so an event is never dated before the news that reports it.
SELECT
    *,
    CASE
        WHEN $enabled AND SQLDATE <> DATEADDED // 1000000 THEN
            CASE
                WHEN SQLDATE > DATEADDED // 1000000 THEN 'SQLDATE after the publish day'
                ELSE 'SQLDATE ' || date_diff(
                    'day', strptime(CAST(SQLDATE AS VARCHAR), '%Y%m%d')::DATE, date
                ) || ' day(s) before the publish day'
            END
    END AS reason
FROM rule_input
