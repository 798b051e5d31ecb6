"""Reference tables shipped with the package: countries, CAMEO country codes, CAMEO relations."""

from pipeline.reference.tables import DATA_DIR, cameo_countries, countries, relations

__all__ = ["DATA_DIR", "cameo_countries", "countries", "relations"]
