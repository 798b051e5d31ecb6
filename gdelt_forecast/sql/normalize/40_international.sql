-- Rule 3 (events.international_only): the subject and object are different countries.
SELECT
    *,
    CASE WHEN $enabled AND head = tail THEN 'domestic (' || head || ')' END AS reason
FROM rule_input
