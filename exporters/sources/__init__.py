"""Implementations of the source interfaces the collectors read (see each collector module):
the landscape model serves them all, PostgreSQL's statistics serve the buffer pools."""
