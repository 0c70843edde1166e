"""Grafana dashboards of wlmon, written by `python -m dashboards.build` (see README.md)."""
