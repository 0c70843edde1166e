"""One collector per module, each reading the source interface it defines; they are
registered, with their enable flags, in exporters.registry."""
