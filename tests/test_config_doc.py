"""docs/configuration.md is what the config models say, and every setting says something."""

import yaml
from pydantic import BaseModel, Field

from gdelt_forecast.ground.config import REPO_DEFAULT
from gdelt_forecast.pipeline import config_doc


def test_every_setting_has_a_description_and_every_section_a_docstring():
    assert config_doc.undocumented() == []


def test_a_setting_or_section_left_undescribed_is_named():
    class Inner(BaseModel):
        said: int = Field(1, description="Said.")
        unsaid: int = 2

    class Outer(BaseModel):
        """Documented."""

        inner: Inner = Inner()

    assert config_doc.undocumented(Outer) == [
        "inner (section Inner: no docstring)",
        "inner.unsaid (no description)",
    ]


def test_every_key_of_the_default_file_has_its_row():
    sections = {key for key, _, _ in config_doc.sections()}

    def keys(tree: dict, prefix: str = "") -> list[str]:
        found = []
        for name, value in tree.items():
            key = f"{prefix}{name}"
            found += keys(value, f"{key}.") if key in sections else [key]
        return found

    page = config_doc.render()
    written = yaml.safe_load(REPO_DEFAULT.read_text(encoding="utf-8"))
    assert [k for k in keys(written) if f"| `{k}` |" not in page] == []


def test_types_and_defaults_read_as_written():
    leaves = {k: f for _, _, fields in config_doc.sections() for k, f in fields.items()}

    def typed(key: str) -> str:
        return config_doc.type_text(leaves[key].annotation, leaves[key].metadata)

    assert typed("download.parallelism") == "1 ≤ int ≤ 64"
    assert typed("download.connect_timeout_s") == "float > 0"
    assert typed("testset.horizons") == "list[int ≥ 1], at least 1 item"
    assert typed("gdelt.tables") == "list[`export` or `mentions`]"
    assert typed("ingest.compression") == "`zstd`, `snappy`, `gzip` or `none`"
    assert typed("duckdb.threads") == "int ≥ 1 or null"
    assert typed("tasks.test_from") == "date (YYYY-MM-DD) or null"
    assert typed("site.files_url") == "str, matching `^https?://` or null"
    assert [config_doc.default_text(v) for v in ("", None, True, [1], {}, "a b")] == [
        "''", "null", "true", "[1]", "{}", "a b",
    ]  # fmt: skip
