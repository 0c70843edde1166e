"""Every alert's runbook_url is a link a person can click: absolute, to the page the API
serves, at a section that exists there."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml
from fastapi.testclient import TestClient

from alerts.dashboards import DASHBOARDS
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
    page = render("## SAPEnqueueTimeHigh\n\n<script>alert(1)</script>\n", "http://x:3000")
    assert _ids(page) == {"sapenqueuetimehigh"}
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert section_id("Run events (Loki)") == "run-events-loki"


def test_base_url_setting_must_be_absolute(monkeypatch) -> None:
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "https://noc.example/runbooks/")
    assert RunbookSettings().runbook_base_url == "https://noc.example/runbooks"
    monkeypatch.setenv("WLMON_RUNBOOK_BASE_URL", "alerts/runbooks.md")
    with pytest.raises(ValueError, match="WLMON_RUNBOOK_BASE_URL"):
        RunbookSettings()


OWN_PARTS = {
    r["alert"]
    for g in yaml.safe_load((ALERTS / "monitoring.rules.yml").read_text())["groups"]
    for r in g["rules"]
    if "alert" in r
}


@pytest.mark.parametrize("rule", ALERT_RULES, ids=_rule_id)
def test_each_alert_links_to_the_dashboard_of_its_evidence(rule: dict) -> None:
    """Every alert but those about wlmon's own parts has a dashboard, one that exists
    (dashboards/perses/<name>.json) and has the SID and instance variables its link sets;
    the runbook page links its section there."""
    name = rule["alert"]
    if name in OWN_PARTS:
        assert name not in DASHBOARDS
        return
    dashboard = DASHBOARDS[name]
    resource = json.loads(
        (ALERTS.parent / "dashboards" / "perses" / f"{dashboard}.json").read_text()
    )
    variables = {v["spec"]["name"] for v in resource["spec"]["variables"]}
    assert {"sid", "sap_instance"} <= variables
    page = render(f"## {name}\n\ntext\n", "http://noc.example:3000/")
    href = f'href="http://noc.example:3000/projects/wlmon/dashboards/{dashboard}"'
    assert href in page, page


def test_the_served_page_links_dashboards_where_operators_open_them(tmp_path) -> None:
    settings = Settings(db_path=tmp_path / "db.sqlite", dashboards_url="http://noc.example:3000")
    with TestClient(create_app(settings)) as client:
        html = client.get("/runbooks").text
    assert 'href="http://noc.example:3000/projects/wlmon/dashboards/st03"' in html
    assert html.count('class="dashboard"') == len(
        set(DASHBOARDS) & {r["alert"] for r in ALERT_RULES}
    )
