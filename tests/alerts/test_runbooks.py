"""Every alert's runbook_url is a link a person can click: absolute, to the page the API
serves, at a section that exists there."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from fastapi.testclient import TestClient

from alerts.settings import DEFAULT_RUNBOOK_BASE_URL, RunbookSettings
from api.config import Settings
from api.main import create_app
from api.services.runbooks import render
from exporters.vocabulary import section_id

ALERTS = Path(__file__).resolve().parents[2] / "alerts"
ALERT_RULES = [
    r
    for f in sorted(ALERTS.glob("*.rules.yml"))
    for g in yaml.safe_load(f.read_text())["groups"]
    for r in g["rules"]
    if "alert" in r
]


class _Ids(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.ids |= {v for k, v in attrs if k == "id" and v}


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> tuple[str, str, dict]:
    db = tmp_path_factory.mktemp("api") / "db.sqlite"
    with TestClient(create_app(Settings(db_path=db))) as client:
        page = client.get("/runbooks")
        assert page.status_code == 200
        return page.headers["content-type"], page.text, client.get("/openapi.json").json()


def _ids(html: str) -> set[str]:
    parser = _Ids()
    parser.feed(html)
    return parser.ids


def _rule_id(rule: dict) -> str:
    return "-".join([rule["alert"], *rule["labels"].values()])


@pytest.mark.parametrize("rule", ALERT_RULES, ids=_rule_id)
def test_runbook_url_leads_to_a_section_the_api_serves(rule: dict, served) -> None:
    url = urlsplit(rule["annotations"]["runbook_url"])
    assert url.scheme in {"http", "https"} and url.netloc, "an e-mail needs an absolute URL"
    assert url.path == urlsplit(DEFAULT_RUNBOOK_BASE_URL).path == "/runbooks"
    assert url.fragment in _ids(served[1]), f"no section #{url.fragment} in GET /runbooks"


def test_runbooks_are_html_and_declared_in_openapi(served) -> None:
    content_type, html, openapi = served
    assert content_type.startswith("text/html")
    assert "<h2" in html and "<strong>Paper's diagnosis:</strong>" in html
    get = openapi["paths"]["/runbooks"]["get"]
    assert "text/html" in get["responses"]["200"]["content"]
    assert get["tags"] == ["runbooks"]


def test_headings_become_ids_and_raw_html_stays_text() -> None:
    page = render("## SAPEnqueueTimeHigh\n\n<script>alert(1)</script>\n")
    assert _ids(page) == {"sapenqueuetimehigh"}
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert section_id("Run events (Loki)") == "run-events-loki"


def test_base_url_setting_must_be_absolute(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "https://noc.example/runbooks/")
    assert RunbookSettings().runbook_base_url == "https://noc.example/runbooks"
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "alerts/runbooks.md")
    with pytest.raises(ValueError, match="WLMON_RUNBOOK_BASE_URL"):
        RunbookSettings()
