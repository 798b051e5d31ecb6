"""Create the bucket of $GDELT_FORECAST_DATA_ROOT (s3://bucket/prefix) if it is missing: a
fresh MinIO has none, and the pipeline never creates buckets (a typo in a data root should
fail, not make a new bucket)."""

import os

import s3fs

root = os.environ["GDELT_FORECAST_DATA_ROOT"]
if root.startswith("s3://"):
    name = root.removeprefix("s3://").split("/")[0]
    fs = s3fs.S3FileSystem()
    if not fs.exists(name):
        fs.mkdir(name)
        print(f"created bucket {name} at {os.environ.get('AWS_ENDPOINT_URL', 'AWS')}")
