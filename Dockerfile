# wlmon's own services (exporter, API) for docker-compose.
FROM python:3.11.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY landscape_model ./landscape_model
COPY exporters ./exporters
COPY api ./api
COPY wlmon ./wlmon
COPY alerts ./alerts
COPY dashboards ./dashboards
# The discrete-event loop compiled into the image as the user that runs it: numba caches
# it beside des_loop.py only in a directory that user can write (else in ~/.cache, which a
# system user has not), so the exporter loads it instead of compiling at every start.
RUN pip install --no-cache-dir -e . && useradd --system --uid 10001 wlmon \
    && mkdir -p landscape_model/__pycache__ && chown wlmon landscape_model/__pycache__
USER wlmon
RUN python -m landscape_model.compile_des
ENTRYPOINT ["python", "-m", "wlmon"]
CMD ["exporter", "--host", "0.0.0.0"]
