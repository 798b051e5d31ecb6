# Airflow with gdelt-forecast installed, pinned by the repo's constraints.txt.
# Build from the repository root: docker build -f docker/airflow.Dockerfile .
FROM apache/airflow:3.3.2-python3.11
COPY --chown=airflow:root pyproject.toml README.md constraints.txt /opt/gdelt-forecast/
COPY --chown=airflow:root pipeline /opt/gdelt-forecast/pipeline
COPY --chown=airflow:root configs /opt/gdelt-forecast/configs
COPY --chown=airflow:root sql /opt/gdelt-forecast/sql
# Editable, so the package finds sql/ and configs/ beside it as in a checkout.
RUN pip install --no-cache-dir -c /opt/gdelt-forecast/constraints.txt -e /opt/gdelt-forecast
ENV GDELT_FORECAST_CONFIG=/opt/gdelt-forecast/configs/default.yaml
