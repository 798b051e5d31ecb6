"""The politeness store ``articles.politeness_store`` names: the data root's SQLite file
(:class:`~gdelt_forecast.articles.politeness.FileStore`) by default, else a Redis server that
every fetcher of every machine shares (:mod:`gdelt_forecast.articles.politeness_redis`). Apart
from both, so that neither store's module imports the other."""

from __future__ import annotations

from gdelt_forecast.articles.politeness import FILE_NAME, FileStore, Store
from gdelt_forecast.articles.politeness_redis import RedisStore
from gdelt_forecast.ground.config import Config
from gdelt_forecast.ground.data_root import DataRoot


def open_store(cfg: Config) -> Store:
    """The store ``articles.politeness_store`` names; by default the data root's file."""
    url = cfg.articles.politeness_store
    if url:
        return RedisStore(cfg.articles, url)
    return FileStore(cfg.articles, DataRoot(cfg.data_root).scratch / FILE_NAME)
