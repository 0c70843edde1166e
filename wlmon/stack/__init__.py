"""The real servers wlmon runs natively: pinned versions built from the registries."""
