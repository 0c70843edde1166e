"""Reads alerts/runbooks.md: the alerts package owns the file; the API gets a reader of it
handed down by its app factory and renders what it is given."""

from __future__ import annotations

from pathlib import Path

RUNBOOKS_FILE = Path(__file__).resolve().parent / "runbooks.md"


def read_runbooks(path: Path = RUNBOOKS_FILE) -> str:
    """The Markdown, read per call: an edited runbook is served without a restart."""
    return path.read_text(encoding="utf-8")
