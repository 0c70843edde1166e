"""Runs: time windows with an id, their recorded series, reports and comparisons."""
