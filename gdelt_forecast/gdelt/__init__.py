"""GDELT 2.0 ingestion: masterfile listing, verified downloads, typed bronze Parquet."""
