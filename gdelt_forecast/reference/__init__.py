"""Reference tables shipped with the package: countries and their names, CAMEO country codes,
CAMEO relations."""

from gdelt_forecast.reference.tables import (
    DATA_DIR,
    cameo_countries,
    countries,
    country_names,
    relations,
)

__all__ = ["DATA_DIR", "cameo_countries", "countries", "country_names", "relations"]
