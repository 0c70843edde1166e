"""wlmon: the command line and the native stack manager."""
