"""Waiting for servers that answer eventually, a local SMTP sink and a heartbeat receiver."""

from __future__ import annotations

import email
import email.policy
import http.server
import json
import threading
import time
from collections.abc import Callable

import httpx
from aiosmtpd.controller import Controller

from api.runs.gaps import EXPORTER_DOWN, NO_DATA, describe


def eventually(check: Callable[[], object], timeout: float = 60.0, every: float = 1.0):
    """The first truthy result of check() within timeout, else the last failure."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            last = check()
            if last:
                return last
        except (httpx.HTTPError, AssertionError, KeyError, IndexError) as exc:
            last = exc
        time.sleep(every)
    raise AssertionError(f"not within {timeout:.0f} s: {last!r}")


def exporter_scraped_cleanly(prometheus: str) -> bool:
    """Every exporter scrape of the last 10 s succeeded: an earlier module's outage or
    restart of the shared stack (exporter down, PostgreSQL source) is behind us, so a gap
    a run reports is its own."""
    r = httpx.get(
        f"{prometheus}/api/v1/query",
        params={"query": 'min_over_time(up{job="wlmon-exporter"}[10s])'},
        timeout=10,
    )
    result = r.json()["data"]["result"]
    return bool(result) and all(float(s["value"][1]) == 1 for s in result)


class Mailbox:
    """aiosmtpd handler keeping every message it is sent (subject, recipients, text)."""

    def __init__(self) -> None:
        self.messages: list[dict] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        parts = [p.get_content() for p in msg.walk() if p.get_content_maintype() == "text"]
        with self._lock:
            self.messages.append(
                {
                    "received": time.time(),
                    "subject": str(msg["Subject"]),
                    "to": list(envelope.rcpt_tos),
                    "text": "\n".join(parts),
                }
            )
        return "250 Message accepted for delivery"

    def since(self, t: float) -> list[dict]:
        with self._lock:
            return [m for m in self.messages if m["received"] >= t]


# A run on a loaded CI machine may lose a scrape (its timeout is 2 s); its report then names
# the step that lost it as a gap. At most this many such steps are a hiccup, not a failure.
HICCUPS = 2


def unexpected_run_message(message: str, gaps: list[dict], step_s: float) -> str | None:
    """What in a finished run's `message` is more than a lost scrape, or None: the message
    is empty, or it is exactly the report's own gaps (`gaps`, as `describe` words them),
    each an exporter_down or no_data hole of one step (`step_s`, the report's resolution in
    the system's time) at most, and at most HICCUPS of them. Anything else in the message
    (a failed step, an exporter that did not hold the plan, a note this does not know) and
    any longer or more frequent hole is returned, for the assertion to show."""
    if message == "":
        return None
    if message != describe(gaps):
        return f"the message is not (only) the report's gaps {gaps}: {message!r}"
    long = [
        g
        for g in gaps
        if g["kind"] not in (EXPORTER_DOWN, NO_DATA) or g["end_s"] - g["start_s"] > step_s
    ]
    if long or len(gaps) > HICCUPS:
        return f"more than {HICCUPS} lost scrapes of one {step_s:.0f} s step each: {gaps}"
    return None


def start_smtp_sink(port: int) -> tuple[Controller, Mailbox]:
    box = Mailbox()
    controller = Controller(box, hostname="127.0.0.1", port=port)
    controller.start()
    return controller, box


class Heartbeats:
    """A webhook receiver on 127.0.0.1 keeping what Alertmanager POSTs (the watchdog's
    heartbeat service stand-in): arrival time and the alert names of each beat."""

    def __init__(self) -> None:
        self.beats: list[tuple[float, list[str]]] = []
        self._lock = threading.Lock()
        beats, lock = self.beats, self._lock

        class _Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                names = [a["labels"].get("alertname", "") for a in json.loads(body)["alerts"]]
                with lock:
                    beats.append((time.time(), names))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/beat"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def since(self, t: float) -> list[tuple[float, list[str]]]:
        with self._lock:
            return [b for b in self.beats if b[0] >= t]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
