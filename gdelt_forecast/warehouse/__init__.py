"""The DuckDB warehouse later stages read: rebuilt whole from silver Parquet."""
