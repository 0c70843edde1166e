"""wlmon API: post-run forensics, notifications and control of the model."""
