-- Rule 2: both actors are countries. CAMEO actor country codes map to ISO-3166 alpha-3
-- through the crosswalk; regional codes (EUR, MEA, ...) and unknown codes are dropped.
SELECT
    r.*,
    a1.iso3 AS head,
    a2.iso3 AS tail,
    CASE
        WHEN r.Actor1CountryCode IS NULL THEN 'Actor1CountryCode missing'
        WHEN a1.iso3 IS NULL THEN
            'Actor1CountryCode ' || r.Actor1CountryCode || CASE
                WHEN a1.kind IS NULL THEN ' is unknown'
                WHEN a1.kind = 'region' THEN ' is a region'
                ELSE ' is not a country (' || a1.cameo_label || ')'
            END
        WHEN r.Actor2CountryCode IS NULL THEN 'Actor2CountryCode missing'
        WHEN a2.iso3 IS NULL THEN
            'Actor2CountryCode ' || r.Actor2CountryCode || CASE
                WHEN a2.kind IS NULL THEN ' is unknown'
                WHEN a2.kind = 'region' THEN ' is a region'
                ELSE ' is not a country (' || a2.cameo_label || ')'
            END
    END AS reason
FROM rule_input AS r
LEFT JOIN cameo_countries AS a1 ON a1.cameo_code = r.Actor1CountryCode
LEFT JOIN cameo_countries AS a2 ON a2.cameo_code = r.Actor2CountryCode
