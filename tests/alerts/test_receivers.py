"""Every receiver a person reads, received over its real protocol on loopback from the real
Alertmanager with the shipped config and templates, rendered as `wlmon up` renders them.

E-mail goes to an SMTP server the test starts (aiosmtpd); Slack, Microsoft Teams (msteamsv2)
and PagerDuty (Events API v2) post to an HTTP server the test starts, their URLs pointed
at it as an operator points them at the real services. The API's webhook points at a
closed port: the API is dead, and the people are told anyway (issue 38, item 4).

Each message must name the SID, the instances, the value against the page level it fired
on, since when, the diagnosis, the runbook and the dashboard link, which is compared
against alerts/dashboards.py's own (Python) construction of it.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import yaml

from alerts import dashboards
from tests.integration.helpers import eventually, start_smtp_sink
from wlmon.stack.components import COMPONENTS
from wlmon.stack.render import ALERTMANAGER_USER, configured_receivers, render_alertmanager

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "receivers-test-password"
PERSES = "http://noc.example:3000"
RUNBOOKS = "http://noc.example:8000/runbooks"
INSTANCES = ["penguin2_D00", "penguin3_D00"]
VALUE_MS = 912.4
# The secrets: each must reach its service and appear in no config or log.
SLACK_TOKEN = "T000/B000/slacksecret123"
TEAMS_TOKEN = "workflows/teamssecret456"
ROUTING_KEY = "pdroutingkey789abcdef0123456789ab"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Posts:
    """An HTTP server keeping every POST: path and JSON body."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, dict]] = []
        self.lock = threading.Lock()
        posts, lock = self.posts, self.lock

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with lock:
                    posts.append((self.path, body))
                # As the services answer: PagerDuty 202 with a JSON status, Slack's
                # incoming webhook 200 "ok" (Alertmanager checks that body), Teams 200.
                pager = self.path.startswith("/pagerduty")
                self.send_response(202 if pager else 200)
                self.end_headers()
                self.wfile.write(b'{"status":"success"}' if pager else b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def at(self, prefix: str) -> list[dict]:
        with self.lock:
            return [b for p, b in self.posts if p.startswith(prefix)]


@pytest.fixture
def alertmanager(tmp_path) -> Iterator[tuple[str, tuple, object, Posts, Path, dict]]:
    binary = COMPONENTS["alertmanager"].path("alertmanager")
    if not Path(binary).is_file():
        pytest.skip(f"{binary} missing: run `wlmon stack install --only alertmanager`")
    controller, mailbox = start_smtp_sink(_free_port())
    posts = Posts()
    values = {
        "WLMON_API_URL": f"http://127.0.0.1:{_free_port()}",  # nothing listens: the API is dead
        "WLMON_API_TOKEN": "receivers-test-token",
        "WLMON_ALERTMANAGER_PASSWORD": PASSWORD,
        "WLMON_PERSES_URL": PERSES,
        "WLMON_SMTP_SMARTHOST": f"127.0.0.1:{controller.port}",
        "WLMON_SMTP_REQUIRE_TLS": "false",
        "WLMON_ALERT_EMAIL_CRITICAL": "oncall@wlmon.test",
        "WLMON_ALERT_EMAIL_WARNING": "noc@wlmon.test",
        "WLMON_SLACK_WEBHOOK_URL": f"{posts.base}/slack/{SLACK_TOKEN}",
        "WLMON_SLACK_CHANNEL": "#sap-noc",
        "WLMON_TEAMS_WEBHOOK_URL": f"{posts.base}/teams/{TEAMS_TOKEN}",
        "WLMON_PAGERDUTY_URL": f"{posts.base}/pagerduty/v2/enqueue",
        "WLMON_AM_GROUP_WAIT": "1s",
        # Long enough to gather the instances posted together (an alert older than
        # group_wait when first seen is flushed at once, alone).
        "WLMON_AM_CAUSE_GROUP_WAIT": "10s",
        "WLMON_AM_CAUSE_GROUP_INTERVAL": "5s",
    }
    # The routing key as an operator's own secret file (WLMON_PAGERDUTY_ROUTING_KEY_FILE).
    own = tmp_path / "pagerduty-key"
    own.write_text(ROUTING_KEY + "\n")
    values["WLMON_PAGERDUTY_ROUTING_KEY_FILE"] = str(own)
    out = render_alertmanager(REPO / "provisioning" / "alertmanager", values, tmp_path / "config")
    port = _free_port()
    log = tmp_path / "alertmanager.log"
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [
                str(binary),
                f"--config.file={out}",
                f"--web.config.file={out.parent / 'web.yml'}",
                f"--storage.path={tmp_path / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--web.external-url=http://noc.example:9093",
                "--cluster.listen-address=",
            ],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    try:
        base = f"http://127.0.0.1:{port}"
        auth = (ALERTMANAGER_USER, PASSWORD)
        eventually(lambda: httpx.get(f"{base}/-/ready", auth=auth).status_code == 200, 30, 0.5)
        yield base, auth, mailbox, posts, log, values
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        controller.stop()
        posts.server.shutdown()


def _rule(name: str) -> dict:
    doc = yaml.safe_load((REPO / "alerts" / "workload.rules.yml").read_text())
    (rule,) = [r for g in doc["groups"] for r in g["rules"] if r.get("alert") == name]
    return rule


def _page(inst: str, starts: dt.datetime, ends: dt.datetime) -> dict:
    """SAPDatabaseRequestTimeHigh as Prometheus posts it: the rule's own annotations with
    its template filled as Prometheus fills it."""
    rule = _rule("SAPDatabaseRequestTimeHigh")
    labels = {"alertname": "SAPDatabaseRequestTimeHigh", "sid": "BMK", "sap_instance": inst}
    labels |= rule["labels"] | {"task_type": "dialog"}
    annotations = {
        k: v.replace("{{ $labels.sap_instance }}", inst)
        .replace("{{ $labels.sid }}", "BMK")
        .replace('{{ printf "%.0f" $value }}', f"{VALUE_MS:.0f}")
        for k, v in rule["annotations"].items()
    }
    annotations["runbook_url"] = f"{RUNBOOKS}#sapdatabaserequesttimehigh"
    return {
        "labels": labels,
        "annotations": annotations,
        "startsAt": starts.isoformat(),
        "endsAt": ends.isoformat(),
        "generatorURL": "http://noc.example:9090/graph?g0.expr=db",
    }


def _api_down(starts: dt.datetime) -> dict:
    return {
        "labels": {
            "alertname": "SAPAPIDown",
            "severity": "critical",
            "job": "wlmon-api",
            "instance": "127.0.0.1:8000",
        },
        "annotations": {
            "summary": "The wlmon API does not answer.",
            "description": "Prometheus could not scrape the API for 2 minutes.",
            "diagnosis": "Its process died or hangs.",
            "runbook_url": f"{RUNBOOKS}#sapapidown",
        },
        "startsAt": starts.isoformat(),
        "endsAt": (starts + dt.timedelta(minutes=4)).isoformat(),
        "generatorURL": "http://noc.example:9090/graph?g0.expr=up",
    }


def _strings(value) -> str:
    """Every string of a JSON body, one per line (what a chat client or pager shows)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return "\n".join(_strings(v) for v in value.values())
    if isinstance(value, list):
        return "\n".join(_strings(v) for v in value)
    return ""


def _check_page(text: str, starts: dt.datetime, status: str, ends: dt.datetime | None) -> None:
    text = text.split("<pre>")[0]  # an e-mail's plain part (its HTML part says the same)
    text = text.replace("**", "")  # Teams' Markdown
    assert "BMK" in text and all(i in text for i in INSTANCES), text
    assert f"spend {VALUE_MS:.0f} ms" in text and "600 ms page level" in text, text
    assert f"Since: {starts:%Y-%m-%d %H:%M:%S} UTC" in text, text
    assert _rule("SAPDatabaseRequestTimeHigh")["annotations"]["diagnosis"][:60] in text
    assert f"{RUNBOOKS}#sapdatabaserequesttimehigh" in text
    assert "http://noc.example:9090/graph" in text  # the generator URL
    links = re.findall(r"Dashboard: (\S+)", text)
    assert len(links) == len(INSTANCES), text
    for inst, link in zip(INSTANCES, links, strict=True):
        labels = {"alertname": "SAPDatabaseRequestTimeHigh", "sid": "BMK", "sap_instance": inst}
        now = dt.datetime.now(dt.UTC)
        expected = dashboards.dashboard_url(PERSES, labels, starts, ends, now)
        got, want = urlsplit(link), urlsplit(expected)
        assert (
            got[:3] == want[:3] == ("http", "noc.example:3000", "/projects/wlmon/dashboards/st03")
        )
        got_q, want_q = parse_qs(got.query), parse_qs(want.query)
        for key in ("start", "var-sid", "var-sap_instance"):
            assert got_q[key] == want_q[key], (key, link, expected)
        if status == "resolved":
            assert got_q["end"] == want_q["end"]
        else:  # to the notification's time: between the alert's start and now
            assert int(want_q["start"][0]) < int(got_q["end"][0]) <= int(want_q["end"][0])


def test_every_receiver_tells_a_person_what_to_act_on(alertmanager) -> None:
    base, auth, mailbox, posts, log, values = alertmanager
    assert configured_receivers(values) == [
        f"e-mail via {values['WLMON_SMTP_SMARTHOST']} to oncall@wlmon.test (pages), "
        "noc@wlmon.test (warnings)",
        "Slack",
        "Microsoft Teams",
        "PagerDuty",
    ]
    starts = dt.datetime.now(dt.UTC).replace(microsecond=0)
    far = dt.datetime.now(dt.UTC) + dt.timedelta(minutes=4)
    r = httpx.post(
        f"{base}/api/v2/alerts",
        json=[*(_page(i, starts, far) for i in INSTANCES), _api_down(starts)],
        auth=auth,
        timeout=10,
    )
    assert r.status_code == 200, r.text

    def firing(alert: str):
        mails = [m for m in mailbox.messages if alert in m["text"] and "[FIRING" in m["subject"]]
        slack = [b for b in posts.at("/slack/") if alert in _strings(b) and "FIRING" in _strings(b)]
        teams = [b for b in posts.at("/teams/") if alert in _strings(b) and "FIRING" in _strings(b)]
        pager = [b for b in posts.at("/pagerduty/") if alert in _strings(b)]
        return (mails, slack, teams, pager) if mails and slack and teams and pager else None

    mails, slack, teams, pager = eventually(lambda: firing("SAPDatabaseRequestTimeHigh"), 60, 1)
    for what, body in (("Slack", slack[0]), ("Teams", teams[0]), ("PagerDuty", pager[0])):
        print(f"\n--- {what} (firing) ---\n" + json.dumps(body, indent=1)[:6000])
    (mail,) = mails
    assert mail["to"] == ["oncall@wlmon.test"]
    assert mail["subject"].startswith("[FIRING:2] BMK cause database")
    _check_page(mail["text"], starts, "firing", None)
    (s,) = slack
    assert s["channel"] == "#sap-noc"
    _check_page(_strings(s), starts, "firing", None)
    _check_page(_strings(teams[0]), starts, "firing", None)
    # In an Adaptive Card a single newline joins lines: each line is a paragraph.
    card_text = teams[0]["attachments"][0]["content"]["body"][1]["text"]
    assert "\n\nSince: " in card_text and "\n\nRunbook: " in card_text
    (p,) = pager
    assert p["routing_key"] == ROUTING_KEY and p["event_action"] == "trigger"
    assert p["payload"]["summary"].startswith("[FIRING:2] BMK cause database")
    _check_page(p["payload"]["custom_details"]["alerts"], starts, "firing", None)
    assert p["links"][0]["href"].startswith(f"{PERSES}/projects/wlmon/dashboards/st03?start=")

    # The API is dead (its webhook fails) and SAPAPIDown reaches every person regardless.
    mails, slack, teams, pager = eventually(lambda: firing("SAPAPIDown"), 60, 1)
    assert "Dashboard: none (an alert about wlmon's own parts" in mails[0]["text"]
    assert "SID: none: an alert about wlmon itself" in mails[0]["text"]
    assert "Instances: 127.0.0.1:8000 (wlmon-api)" in mails[0]["text"]
    assert f"{RUNBOOKS}#sapapidown" in _strings(slack[0])

    # The fault removed: a resolved message to each, the link closing at the alert's end.
    ended = dt.datetime.now(dt.UTC).replace(microsecond=0)
    r = httpx.post(
        f"{base}/api/v2/alerts",
        json=[_page(i, starts, ended) for i in INSTANCES],
        auth=auth,
        timeout=10,
    )
    assert r.status_code == 200, r.text

    def resolved():
        mails = [m for m in mailbox.messages if "[RESOLVED] BMK cause database" in m["subject"]]
        slack = [b for b in posts.at("/slack/") if "[RESOLVED] BMK cause" in _strings(b)]
        teams = [b for b in posts.at("/teams/") if "[RESOLVED] BMK cause" in _strings(b)]
        pager = [b for b in posts.at("/pagerduty/") if b["event_action"] == "resolve"]
        return (mails, slack, teams, pager) if mails and slack and teams and pager else None

    try:
        mails, slack, teams, pager = eventually(resolved, 60, 1)
    except AssertionError:
        print([m["subject"] for m in mailbox.messages], [_strings(b)[:80] for _, b in posts.posts])
        print(log.read_text()[-3000:])
        raise
    _check_page(mails[0]["text"], starts, "resolved", ended)
    _check_page(_strings(slack[0]), starts, "resolved", ended)
    _check_page(_strings(teams[0]), starts, "resolved", ended)

    # The secrets went where they belong and nowhere else.
    config = (log.parent / "config").rglob("*.yml")
    for text in [log.read_text(), *(p.read_text() for p in config)]:
        for secret in ("slacksecret123", "teamssecret456", ROUTING_KEY):
            assert secret not in text
    print("\n--- e-mail ---\n" + mails[0]["text"])


def test_without_their_secrets_no_chat_or_pager_is_rendered(tmp_path) -> None:
    out = render_alertmanager(
        REPO / "provisioning" / "alertmanager",
        {"WLMON_API_TOKEN": "t", "WLMON_ALERTMANAGER_PASSWORD": PASSWORD},
        tmp_path,
    )
    doc = yaml.safe_load(out.read_text())
    keys = {k for r in doc["receivers"] for k in r if k != "name"}
    assert keys == {"webhook_configs"}
    (watchdog,) = [r for r in doc["receivers"] if r["name"] == "watchdog"]
    assert watchdog == {"name": "watchdog"}
    assert not (tmp_path / "slack-webhook-url").exists()
