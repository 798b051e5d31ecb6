# Airflow with gdelt-forecast installed, pinned by the repo's constraints.txt.
# Build from the repository root, naming the commit (the context has no .git, and a package
# that cannot name its commit refuses to build; setup.py):
#   docker build -f docker/airflow.Dockerfile --build-arg GIT_COMMIT=$(git rev-parse HEAD) .
# The context holds only what the COPY lines take (airflow.Dockerfile.dockerignore).
FROM apache/airflow:3.3.2-python3.11
COPY --chown=airflow:root pyproject.toml setup.py README.md constraints.txt /opt/gdelt-forecast/
# The package carries its SQL, reference tables and filter lists as package data; the
# config is read from configs/.
COPY --chown=airflow:root gdelt_forecast /opt/gdelt-forecast/gdelt_forecast
COPY --chown=airflow:root configs /opt/gdelt-forecast/configs
# The sample data compose's `demo` service runs: the real slot and the demo-only days derived
# from it, the demo's pages and the script that archives them, and the script that makes
# the bucket.
COPY --chown=airflow:root demo /opt/gdelt-forecast/demo
COPY --chown=airflow:root tests/fixtures/gdelt/*.CSV /opt/gdelt-forecast/demo/gdelt/
COPY --chown=airflow:root tests/fixtures/gdelt/demo-days/*.CSV /opt/gdelt-forecast/demo/gdelt/demo-days/
COPY --chown=airflow:root docker/make_bucket.py /opt/gdelt-forecast/docker/
# A plain (non-editable) install, as `pip install .` gives a user, with the [s3] extra for a
# data root in a bucket and [celery] for the executor (it pins a celery the provider can
# load); nothing in it needs torch or a GPU.
ARG GIT_COMMIT
RUN GDELT_FORECAST_GIT_COMMIT=${GIT_COMMIT} pip install --no-cache-dir \
        -c /opt/gdelt-forecast/constraints.txt "/opt/gdelt-forecast[s3,celery]"
ENV GDELT_FORECAST_CONFIG=/opt/gdelt-forecast/configs/default.yaml
# Absolute, so every task finds it whatever its working directory; compose sets a bucket.
ENV GDELT_FORECAST_DATA_ROOT=/opt/airflow/data
