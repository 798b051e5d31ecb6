-- Rule 4: the relation is the 3-digit EventBaseCode when it is a second-level CAMEO code;
-- root-only codes (two digits), malformed codes and codes CAMEO does not define are dropped.
SELECT
    r.*,
    rel.code AS relation,
    CASE
        WHEN r.EventBaseCode IS NULL THEN 'EventBaseCode missing'
        WHEN rel.code IS NULL THEN
            'EventBaseCode ' || r.EventBaseCode || ' is not a second-level CAMEO code'
    END AS reason
FROM rule_input AS r
LEFT JOIN relations AS rel ON rel.code = r.EventBaseCode AND rel.level = 2
