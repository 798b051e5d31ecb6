"""The ground every other layer stands on: the configuration, the data root's layout, dates,
files and Parquet writes, DuckDB and its SQL files, errors, summaries and progress, the code
version, the embedding model, and the mending of text from outside. It imports nothing of the
package but itself."""
