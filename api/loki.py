"""Pushes log lines to Loki's push API (JSON), labels per the wlmon label schema."""

from __future__ import annotations

import json
import time

import httpx


class LokiPusher:
    def __init__(self, url: str, timeout: float = 3.0) -> None:
        self.url = url.rstrip("/") + "/loki/api/v1/push"
        self.timeout = timeout

    def push(self, streams: list[tuple[dict[str, str], list[str]]]) -> None:
        """Each stream: its labels and its lines (stamped now, in order). Raises on failure."""
        now = time.time_ns()
        body = {
            "streams": [
                {"stream": labels, "values": [[str(now + i), line] for i, line in enumerate(lines)]}
                for labels, lines in streams
                if lines
            ]
        }
        r = httpx.post(
            self.url,
            content=json.dumps(body),
            headers={"Content-Type": "application/json"},
            timeout=self.timeout,
        )
        r.raise_for_status()
