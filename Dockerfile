# wlmon's own services (exporter, API) for docker-compose.
FROM python:3.11.11-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY exporters ./exporters
COPY api ./api
COPY wlmon ./wlmon
COPY alerts ./alerts
COPY dashboards ./dashboards
RUN pip install --no-cache-dir -e . && useradd --system --uid 10001 wlmon
USER wlmon
ENTRYPOINT ["python", "-m", "wlmon"]
CMD ["exporter", "--host", "0.0.0.0"]
