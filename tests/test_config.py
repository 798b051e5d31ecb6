"""Typed configuration: defaults, files, overrides and one-line errors."""

from pathlib import Path

import pytest

from gdelt_forecast.cli import main
from gdelt_forecast.ground.config import REPO_DEFAULT, Config, ConfigError, load_config


def test_default_yaml_spells_out_the_model_defaults():
    assert load_config(REPO_DEFAULT) == Config()


def test_overrides_are_typed_and_data_root_wins(tmp_path):
    cfg = load_config(
        None,
        ["download.parallelism=3", "gdelt.translation=true", "gdelt.tables=[export]"],
        tmp_path,
    )
    assert cfg.download.parallelism == 3
    assert cfg.gdelt.translation is True
    assert cfg.gdelt.tables == ["export"]
    assert cfg.data_root == tmp_path


def test_config_file_is_read(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("data_root: /srv/gdelt\ningest:\n  workers: 4\n")
    cfg = load_config(path)
    assert str(cfg.data_root) == "/srv/gdelt" and cfg.ingest.workers == 4


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["download.paralelism=3"], "config: unknown key 'download.paralelism'"),
        (["download.parallelism=many"], "config: download.parallelism: Input should be a valid"),
        (["download.parallelism=0"], "config: download.parallelism: Input should be greater"),
        (["gdelt.tables=[events]"], "config: gdelt.tables.0: Input should be 'export' or"),
        (["nosection"], "config: --set expects section.key=value, got 'nosection'"),
        (["data_root.x=1"], "config: 'data_root.x': 'data_root' is a value, not a section"),
    ],
)
def test_bad_keys_and_values_are_one_line_errors(overrides, message):
    with pytest.raises(ConfigError) as err:
        load_config(None, overrides)
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_unreadable_or_malformed_files(tmp_path):
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("gdelt: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n")
    with pytest.raises(ConfigError, match="mapping"):
        load_config(listed)


@pytest.mark.parametrize(
    "root", ["gs://bucket/root", "file:///tmp/x", "s3://b", "s3://Bucket/x", "s3://bucket//x"]
)
def test_a_url_no_stage_serves_is_refused_before_anything_is_written(root, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as err:
        load_config(None, [], root)
    assert str(err.value) == (
        f"config: data_root: {root!r} is not a local folder or s3://bucket[/prefix]: no stage "
        "can serve that URL"
    )
    monkeypatch.setenv("GDELT_FORECAST_DATA_ROOT", root)
    with pytest.raises(ConfigError, match="is not a local folder"):
        load_config(None)
    args = ["ingest", "--start", "2025-08-07T22:00", "--end", "2025-08-07T22:00"]
    assert main([*args, "--data-root", root]) == 2
    assert list(tmp_path.iterdir()) == []  # no folder named "gs:" (or any) appeared


def test_an_s3_data_root_stays_a_url():
    cfg = load_config(None, [], "s3://gdelt-bucket/v1/root/")
    assert cfg.data_root == "s3://gdelt-bucket/v1/root" and cfg.remote
    local = load_config(None, [], "data")
    assert local.data_root == Path("data") and not local.remote
    assert load_config(None, [], "C:/data").data_root == Path("C:/data")  # a drive, no URL
