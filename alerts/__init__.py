"""Prometheus rules of wlmon, written by `python -m alerts.build` (see alerts/README.md)."""
