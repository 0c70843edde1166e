"""wlmon exporters: the landscape model and the collectors that export it."""

__version__ = "0.1.0"
