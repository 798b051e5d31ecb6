# Airflow with gdelt-forecast installed, pinned by the repo's constraints.txt.
# Build from the repository root: docker build -f docker/airflow.Dockerfile .
# The context holds only what the COPY lines take (airflow.Dockerfile.dockerignore).
FROM apache/airflow:3.3.2-python3.11
COPY --chown=airflow:root pyproject.toml README.md constraints.txt /opt/gdelt-forecast/
# The package carries its SQL, reference tables and filter lists as package data; the
# config is read from configs/.
COPY --chown=airflow:root pipeline /opt/gdelt-forecast/pipeline
COPY --chown=airflow:root configs /opt/gdelt-forecast/configs
# A plain (non-editable) install, as `pip install .` gives a user. PyTorch's CPU index
# first: the embedding model needs no GPU, and the default wheel brings GBs of CUDA.
RUN pip install --no-cache-dir --extra-index-url https://download.pytorch.org/whl/cpu \
        -c /opt/gdelt-forecast/constraints.txt /opt/gdelt-forecast
ENV GDELT_FORECAST_CONFIG=/opt/gdelt-forecast/configs/default.yaml
# Absolute, so every task finds it whatever its working directory (compose mounts it).
ENV GDELT_FORECAST_DATA_ROOT=/opt/airflow/data
