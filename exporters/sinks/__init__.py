"""Where the exporter sends what is not a metric: SQL trace lines and run events."""
