-- The export rows of the days being normalized, narrowed to the columns the rules read.
-- Input: bronze_events (bronze export rows of the days plus the URL look-back window).
SELECT
    file_index,
    file_row_number,
    GLOBALEVENTID,
    SQLDATE,
    DATEADDED,
    Actor1CountryCode,
    Actor2CountryCode,
    EventBaseCode,
    NumMentions,
    SOURCEURL,
    -- The event date is the day GDELT added the record: the news publish date.
    strptime(CAST(DATEADDED // 1000000 AS VARCHAR), '%Y%m%d')::DATE AS date
FROM bronze_events
WHERE DATEADDED // 1000000 BETWEEN $first_day AND $last_day
