"""Perses (native) with wlmon's provisioning, through its real HTTP API: its native auth,
the plugins it loaded, every provisioned dashboard as written, and each panel's PromQL run
through Perses' datasource proxy, compared with the same query asked of Prometheus itself."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
import yaml

from tests.integration.conftest import PERSES_DASHBOARDS, PERSES_PASSWORD, perses, url
from tests.integration.helpers import eventually
from wlmon.stack import perses as perses_config
from wlmon.stack.persesplugins import PLUGINS, SOURCE_PLUGINS

pytestmark = pytest.mark.integration

# What a dashboard's variables stand for when its queries are run outside the UI.
VARIABLES = {
    "$sid": "BMK",
    "${sid}": "BMK",
    "$sap_instance": ".*",
    "${sap_instance}": ".*",
    "$task_type": "dialog",
    "${task_type}": "dialog",
    "$__rate_interval": "1m",
    "$__range": "15m",
    "$__interval": "30s",
}


def _dashboards() -> dict[str, dict]:
    """The dashboard files provisioned (YAML or JSON, one resource or a list per file)."""
    found = {}
    for path in sorted(Path(PERSES_DASHBOARDS).iterdir()):
        if path.suffix not in (".yaml", ".yml", ".json"):
            continue
        doc = yaml.safe_load(path.read_text())
        for res in doc if isinstance(doc, list) else [doc]:
            if res.get("kind") == "Dashboard":
                found[res["metadata"]["name"]] = res
    return found


DASHBOARDS = _dashboards()


def _resolve(text: str) -> str:
    for name in sorted(VARIABLES, key=len, reverse=True):
        text = text.replace(name, VARIABLES[name])
    return text


def _prometheus_queries() -> list[tuple[str, str, str]]:
    out = []
    for name, dash in DASHBOARDS.items():
        for key, panel in dash["spec"]["panels"].items():
            for q in panel["spec"].get("queries", []):
                plugin = q["spec"]["plugin"]
                if plugin["kind"] == "PrometheusTimeSeriesQuery":
                    out.append((name, key, plugin["spec"]["query"]))
    return out


def test_anonymous_requests_and_a_wrong_password_are_refused(stack) -> None:
    base = url(stack, "perses")
    r = httpx.get(f"{base}/api/v1/projects/wlmon/dashboards", timeout=10)
    assert r.status_code == 401, r.text
    r = httpx.get(f"{base}/proxy/globaldatasources/prometheus/api/v1/query?query=up", timeout=10)
    assert r.status_code == 401, r.text
    r = httpx.post(
        f"{base}/api/auth/providers/native/login",
        json={"login": "admin", "password": PERSES_PASSWORD + "x"},
        timeout=10,
    )
    assert 400 <= r.status_code < 500, r.text
    # Sign-up is off: nobody creates an account of their own.
    r = httpx.post(
        f"{base}/api/v1/users",
        json={"kind": "User", "metadata": {"name": "eve"}, "spec": {"nativeProvider": {}}},
        timeout=10,
    )
    # disable_sign_up leaves the route out altogether (405); never 200.
    assert r.status_code in (401, 403, 405), r.text
    assert httpx.get(f"{base}/api/v1/health", timeout=10).json()["version"] == "0.54.0"


def test_the_plugins_are_loaded(stack) -> None:
    with perses(stack) as client:
        modules = client.get("/api/v1/plugins").json()
    loaded = {m["metadata"]["name"]: m["status"] for m in modules}
    expected = {
        "Prometheus",
        "Loki",
        "StatChart",
        "TimeSeriesChart",
        "Table",
        "BarChart",
        "GaugeChart",
        "Markdown",
        "VictoriaLogs",
    }
    assert len(PLUGINS) + len(SOURCE_PLUGINS) == len(expected)
    assert set(loaded) == expected, loaded
    assert all(s["isLoaded"] and not s.get("error") for s in loaded.values()), loaded


def test_the_log_has_no_provisioning_error(stack) -> None:
    log = (stack.log_dir / "perses.log").read_text()
    # A browser asking for a file the UI does not ship (favicon.ico) is logged at error level
    # too; that is no provisioning error.
    bad = [
        line
        for line in log.splitlines()
        if ("level=error" in line and "Unable to open the file" not in line)
        or "unable to provision" in line
        or "unable to load" in line
    ]
    assert not bad, "\n".join(bad[:10])


def test_the_project_and_datasources_are_provisioned(stack) -> None:
    with perses(stack) as client:
        project = client.get(f"/api/v1/projects/{perses_config.PROJECT}")
        assert project.status_code == 200, project.text
        names = {d["metadata"]["name"]: d for d in client.get("/api/v1/globaldatasources").json()}
    assert set(names) == {"prometheus", "logs", perses_config.ALERTS_DATASOURCE}
    assert not names[perses_config.ALERTS_DATASOURCE]["spec"]["default"]
    prom = names["prometheus"]["spec"]
    assert prom["default"] and prom["plugin"]["kind"] == "PrometheusDatasource"
    proxy = prom["plugin"]["spec"]["proxy"]["spec"]
    assert proxy["url"] == url(stack, "prometheus")
    logs = names["logs"]["spec"]["plugin"]
    assert logs["kind"] == "VictoriaLogsDatasource"
    assert logs["spec"]["proxy"]["spec"]["url"].startswith("https://127.0.0.1:")


@pytest.mark.parametrize("name", sorted(DASHBOARDS))
def test_every_provisioned_dashboard_loads_as_written(stack, name: str) -> None:
    written = DASHBOARDS[name]
    with perses(stack) as client:
        r = client.get(f"/api/v1/projects/{written['metadata']['project']}/dashboards/{name}")
    assert r.status_code == 200, r.text
    served = r.json()["spec"]
    assert set(served["panels"]) == set(written["spec"]["panels"])
    for key, panel in written["spec"]["panels"].items():
        assert served["panels"][key]["spec"]["plugin"] == panel["spec"]["plugin"], key
    assert len(served["layouts"]) == len(written["spec"]["layouts"])


def test_the_home_page_serves_the_ui(stack) -> None:
    base = url(stack, "perses")
    page = httpx.get(f"{base}{perses_config.dashboard_path()}", timeout=10)
    assert page.status_code == 200 and '<div id="root">' in page.text
    script = httpx.get(f"{base}/main.js", timeout=30)
    assert script.status_code == 200 and len(script.content) > 1_000_000


@pytest.mark.parametrize(("dashboard", "panel", "query"), _prometheus_queries())
def test_a_panel_query_runs_through_perses_proxy(stack, dashboard, panel, query) -> None:
    """The UI's path (Perses' proxy adds nothing the browser must know) against Prometheus
    asked directly: the same series come back."""
    expr = _resolve(query)
    prom = url(stack, "prometheus")

    def both():
        end = time.time()
        params = {"query": expr, "start": end - 300, "end": end, "step": 15}
        with perses(stack) as client:
            via = client.get(
                "/proxy/globaldatasources/prometheus/api/v1/query_range", params=params
            )
        direct = httpx.get(f"{prom}/api/v1/query_range", params=params, timeout=30)
        assert via.status_code == 200, f"{dashboard}/{panel}: {via.status_code} {via.text[:300]}"
        a, b = via.json()["data"]["result"], direct.json()["data"]["result"]
        same = {str(s["metric"]) for s in a} == {str(s["metric"]) for s in b}
        # Over ALERTS ("alert lives"): no series on a healthy stack is the right answer, as
        # long as Prometheus asked directly agrees and the query parses (status 200).
        return same and (bool(a) or "ALERTS" in expr)

    assert eventually(both, timeout=90, every=3), f"{dashboard}/{panel}: no data for {expr}"


def test_the_alerts_page_reads_alertmanager_through_the_proxy_and_only_reads(stack) -> None:
    """The UI's alerts page asks /api/v2/alerts through Perses' proxy, which adds
    Alertmanager's basic auth: the same alerts as Alertmanager asked directly. Anything but
    a GET of the alerts API is refused by the proxy (a signed-in viewer cannot silence or
    post alerts through it), and without a session nothing is answered."""
    am = url(stack, "alertmanager")
    path = f"/proxy/globaldatasources/{perses_config.ALERTS_DATASOURCE}/api/v2"

    def same():
        with perses(stack) as client:
            via = client.get(f"{path}/alerts")
        assert via.status_code == 200, via.text[:300]
        direct = httpx.get(f"{am}/api/v2/alerts", auth=stack.alertmanager_auth(), timeout=10)
        seen, held = (
            {a["fingerprint"]: a["labels"]["alertname"] for a in r.json()} for r in (via, direct)
        )
        assert seen == held, f"through the proxy {seen}, directly {held}"
        # The heartbeat is always there, so an empty answer cannot pass.
        assert "SAPWatchdog" in seen.values(), f"no heartbeat in {seen}"
        return True

    assert eventually(same, timeout=90, every=3)
    silence = {
        "matchers": [{"name": "alertname", "value": "SAPWatchdog", "isRegex": False}],
        "startsAt": "2026-01-01T00:00:00Z",
        "endsAt": "2099-01-01T00:00:00Z",
        "createdBy": "through the proxy",
        "comment": "must be refused",
    }
    with perses(stack) as client:
        posted = client.post(f"{path}/silences", json=silence)
        other = client.get(f"{path}/silences")
    assert posted.status_code == 403, posted.text[:300]
    assert other.status_code == 403, other.text[:300]
    held = httpx.get(f"{am}/api/v2/silences", auth=stack.alertmanager_auth(), timeout=10)
    assert [s for s in held.json() if s["createdBy"] == "through the proxy"] == []
    anonymous = httpx.get(f"{url(stack, 'perses')}{path}/alerts", timeout=10)
    assert anonymous.status_code == 401
