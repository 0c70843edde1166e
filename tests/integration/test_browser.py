"""Every provisioned dashboard as a NOC operator sees it: Debian's Chromium, driven by
selenium through chromium-driver, logs in through Grafana's login form while a real-time run
holds the db-bottleneck fault, opens each dashboard, waits for its panels and reads the DOM.
A full-page PNG of each is saved under tests/artifacts/dashboards/ (docs/dashboards.md is
made from them by `make dashboard-docs`)."""

from __future__ import annotations

import colorsys
import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.conftest import GRAFANA_PASSWORD, grafana, url
from tests.integration.helpers import eventually, exporter_scraped_cleanly
from wlmon.stack.components import COMPONENTS, GRAFANA_COMMIT

selenium = pytest.importorskip("selenium", reason="selenium is a dev dependency (make install)")
from selenium import webdriver  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from tests.chromium import headless_chrome  # noqa: E402

pytestmark = pytest.mark.integration
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "tests" / "artifacts" / "dashboards"
AUTH = {"Authorization": "Bearer integration-test-token"}
# The model runs 10x real time here: 3,000 simulated seconds are 5 minutes at most; the run
# is cancelled as soon as every dashboard has been looked at.
PLAN = {
    "mode": "realtime",
    "duration_s": 3000,
    "ramp_up_s": 60,
    "resolution_s": 60,
    "faults": [{"name": "db-bottleneck", "start_s": 60, "end_s": 3000}],
    "label": "browser: db-bottleneck",
}
FAULTED_ALERT = "SAPDatabaseRequestTimeHigh"
# The NOC light the fault turns red, and the lights of the indicators it leaves alone.
FAULTED_LIGHT = "DB request"
HEALTHY_LIGHTS = ("Dispatcher wait", "Enqueue", "Roll-in", "Roll-out")
WIDTH = 1920
RANGE = "from=now-15m&to=now"
GRID_ROW_PX = 38  # Grafana's grid: 30 px a row plus 8 px margin
CHROME_PX = 260  # the top bar, breadcrumbs and variable pickers above the grid


@pytest.fixture(scope="module")
def faulted(stack) -> Iterator[dict]:
    """A real-time run with db-bottleneck, once its alert fires; cancelled afterwards."""
    api = url(stack, "api")
    eventually(lambda: exporter_scraped_cleanly(url(stack, "prometheus")), timeout=60, every=2)
    r = httpx.post(f"{api}/runs", json=PLAN, headers=AUTH, timeout=60)
    assert r.status_code == 202, r.text
    run = r.json()
    try:
        eventually(lambda: _firing(stack, FAULTED_ALERT), timeout=180, every=3)
        yield run
    finally:
        httpx.post(f"{api}/runs/{run['id']}/cancel", headers=AUTH, timeout=30)
        eventually(
            lambda: httpx.get(f"{api}/runs/{run['id']}").json()["status"] != "running",
            timeout=60,
            every=2,
        )


def _firing(stack, alertname: str) -> bool:
    r = httpx.get(
        f"{url(stack, 'prometheus')}/api/v1/query",
        params={"query": f'ALERTS{{alertname="{alertname}",alertstate="firing"}}'},
        timeout=10,
    )
    return bool(r.json()["data"]["result"])


def chrome() -> webdriver.Chrome:
    """Debian's headless Chromium at 1920 px, driven through chromium-driver."""
    driver = headless_chrome(WIDTH, 1080)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return driver


@pytest.fixture(scope="module")
def browser(stack, faulted) -> Iterator[webdriver.Chrome]:
    driver = chrome()
    try:
        login(driver, url(stack, "grafana"))
        yield driver
    finally:
        driver.quit()


def login(driver, base: str, password: str = GRAFANA_PASSWORD) -> None:
    driver.get(f"{base}/login")
    user = eventually(lambda: driver.find_element(By.NAME, "user"), timeout=30)
    user.send_keys("admin")
    driver.find_element(By.NAME, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    eventually(lambda: "/login" not in driver.current_url, timeout=30)


def _dashboards(stack) -> list[dict]:
    with grafana(stack) as client:
        return client.get("/api/search", params={"type": "dash-db"}).json()


def _model(stack, uid: str) -> dict:
    with grafana(stack) as client:
        return client.get(f"/api/dashboards/uid/{uid}").json()["dashboard"]


def _page_height(model: dict) -> int:
    bottom = max(p["gridPos"]["y"] + p["gridPos"]["h"] for p in model["panels"])
    return CHROME_PX + bottom * GRID_ROW_PX


# Each panel: its title, whether it shows an error, its text, and the colour that fills it
# (the background of a stat light, else none).
PANELS_JS = """
const out = [];
for (const el of document.querySelectorAll('[data-testid^="data-testid Panel header "]')) {
  const title = el.getAttribute('data-testid').slice('data-testid Panel header '.length);
  let fill = null;
  for (const child of el.querySelectorAll('*')) {
    const style = getComputedStyle(child);
    const image = style.backgroundImage;
    if (image && image.startsWith('linear-gradient')) { fill = image; break; }
    const colour = style.backgroundColor;
    const header = child.closest('[data-testid="header-container"]');
    if (fill === null && colour && colour !== 'rgba(0, 0, 0, 0)' && header === null
        && child.offsetWidth > 40 && child.offsetHeight > 40) { fill = colour; }
  }
  out.push({
    title: title,
    error: el.querySelector('[aria-label="Panel status"]') !== null,
    loading: el.querySelector('[aria-label="Panel loading bar"]') !== null,
    text: el.innerText,
    fill: fill,
  });
}
return out;
"""


def _panels(driver) -> list[dict]:
    return driver.execute_script(PANELS_JS)


def _settled(driver, expected: int) -> list[dict] | None:
    """The panels once all `expected` are drawn and none is loading, twice in a row."""
    first = _panels(driver)
    if len(first) < expected or any(p["loading"] for p in first):
        return None
    time.sleep(2)
    second = _panels(driver)
    if any(p["loading"] for p in second) or [p["text"] for p in first] != [
        p["text"] for p in second
    ]:
        return None
    return second


def open_dashboard(driver, base: str, path: str, model: dict, name: str) -> list[dict]:
    driver.set_window_size(WIDTH, max(1080, _page_height(model)))
    driver.get(f"{base}{path}")
    expected = sum(1 for p in model["panels"] if p["type"] != "row")
    panels = eventually(lambda: _settled(driver, expected), timeout=90, every=2)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))
    return panels


def _hue(css: str) -> tuple[float, float]:
    """Hue in degrees and saturation of the first rgb() colour in a CSS value."""
    m = re.search(r"rgba?\((\d+), (\d+), (\d+)", css)
    assert m, css
    r, g, b = (int(x) / 255 for x in m.groups())
    h, _, s = colorsys.rgb_to_hls(r, g, b)
    return h * 360, s


def _critical(css: str | None) -> bool:
    """Red: the colour of a critical light, whatever shade the theme gives it."""
    if css is None:
        return False
    hue, saturation = _hue(css)
    return saturation > 0.4 and (hue >= 340 or hue <= 15)


def _green(css: str | None) -> bool:
    if css is None:
        return False
    hue, saturation = _hue(css)
    return saturation > 0.3 and 80 <= hue <= 150


def test_every_dashboard_renders_without_errors_or_missing_data(stack, browser) -> None:
    base = url(stack, "grafana")
    found = _dashboards(stack)
    assert len(found) >= 7, [d["uid"] for d in found]
    problems = []
    for entry in found:
        model = _model(stack, entry["uid"])
        # The last 15 minutes: the stack (and its data) is only minutes old. The fleet
        # overview's picture in docs/dashboards.md is the real fleet's (test_fleet_thanos).
        name = entry["uid"] if entry["uid"] != "wlmon-fleet" else "wlmon-fleet-one-sid"
        panels = open_dashboard(browser, base, f"{entry['url']}?{RANGE}", model, name)
        for p in panels:
            if p["error"]:
                problems.append(f"{entry['title']} / {p['title']}: panel error")
            if "No data" in p["text"] or "Not read" in p["text"]:
                problems.append(f"{entry['title']} / {p['title']}: {p['text'][:40]!r}")
    assert problems == []


def test_the_instances_dashboard_reads_the_models_sapstartsrv(stack, browser) -> None:
    """`wlmon up` reads its model's sapstartsrv as it would a real system's: every instance
    answers (UP, green), every process light is lit, no web method fails, the CCMS values are
    drawn; nothing says "Not read"."""
    # Prometheus scrapes the exporter, and Telegraf's copy of it: one series per instance.
    instances = len(_prom(stack, 'max by (sid, sap_instance) (sap_up{source="sapcontrol"}) == 1'))
    assert instances == 31, f"{instances} of the SD benchmark's 31 instances answer sapstartsrv"
    processes = len(_prom(stack, "max by (sid, sap_instance, process) (sap_process_status)"))
    model = _model(stack, "wlmon-instances")
    panels = {
        p["title"]: p
        for p in open_dashboard(
            browser, url(stack, "grafana"), f"/d/wlmon-instances?{RANGE}", model, "instances"
        )
    }
    assert not [t for t, p in panels.items() if "Not read" in p["text"]]
    up = panels["Instances (sapstartsrv answering)"]
    assert up["text"].count("UP") == instances and "DOWN" not in up["text"], up["text"]
    assert _green(up["fill"]), up
    # db-bottleneck slows the database, not the processes: none is stopped or failed, and
    # every one but the dispatcher is GREEN, as sapstartsrv lists them (an instance per
    # tile, its count of processes that are not). The dispatcher may read YELLOW for a
    # moment: every dialog step is simulated, and with the database saturated an instance's
    # queue peaks past 1 s of steps in 0.7 % of seconds (max 1.2 s; none on the solver).
    status = "max by (sid, sap_instance, process) (sap_process_status{process%s})"
    assert not _prom(stack, status % '!="disp+work"' + " != 2")  # GREEN is 2
    assert not _prom(stack, status % '="disp+work"' + " != 2 != 3")  # YELLOW is 3
    not_green = panels["Processes not GREEN, per instance (GetProcessList)"]
    counts = re.findall(r"\n(\d+)", not_green["text"])
    assert len(counts) == instances and set(counts) <= {"0", "1"}, not_green["text"]
    assert _green(not_green["fill"]) or "1" in counts, not_green
    assert "GREEN" in panels["Process status lights (GetProcessList)"]["text"]
    assert processes >= 2 * instances  # disp+work and gwrd, or msg_server and enserver
    failing = panels["Web methods failing now"]
    assert failing["text"].split("\n")[-1].strip() == "0" and _green(failing["fill"]), failing


def test_an_unread_source_says_so_instead_of_a_green_zero(stack, browser) -> None:
    """A SID no sapcontrol source reads (not configured, or nothing answers): the instances
    dashboard says it reads nothing, in grey, never healthy zeros."""
    assert not _prom(stack, 'sap_up{source="sapcontrol",sid="NONE"}')
    model = _model(stack, "wlmon-instances")
    path = "/d/wlmon-instances?var-sid=NONE&var-sap_instance=All"
    panels = open_dashboard(browser, url(stack, "grafana"), path, model, "instances-unread")
    failing = next(p for p in panels if p["title"] == "Web methods failing now")
    assert "Not read" in failing["text"] and not _green(failing["fill"]), failing
    for title in (
        "Instances (sapstartsrv answering)",
        "Processes not GREEN, per instance (GetProcessList)",
    ):
        light = next(p for p in panels if p["title"] == title)
        assert "Not read" in light["text"] and "UP" not in light["text"], light
        assert not _green(light["fill"]) and not _critical(light["fill"]), light


def _prom(stack, expr: str) -> list[dict]:
    r = httpx.get(f"{url(stack, 'prometheus')}/api/v1/query", params={"query": expr}, timeout=10)
    r.raise_for_status()
    return r.json()["data"]["result"]


def test_the_noc_shows_the_faulted_light_red_and_the_others_not(stack, browser) -> None:
    model = _model(stack, "wlmon-noc")
    panels = {
        p["title"]: p for p in open_dashboard(browser, url(stack, "grafana"), "/", model, "home")
    }
    # The home page after login is the NOC overview, not Grafana's welcome page.
    assert "Welcome to Grafana" not in browser.find_element(By.TAG_NAME, "body").text
    assert {f"{label} (ms)" for label in (FAULTED_LIGHT, *HEALTHY_LIGHTS)} <= set(panels)

    def light(label: str) -> dict:
        (match,) = [p for t, p in panels.items() if t.startswith(label)]
        return match

    assert _critical(light(FAULTED_LIGHT)["fill"]), light(FAULTED_LIGHT)
    for label in HEALTHY_LIGHTS:
        assert _green(light(label)["fill"]), light(label)


def test_the_alert_list_shows_the_firing_alert(stack, browser) -> None:
    browser.set_window_size(WIDTH, 1080)
    # The state view lists rules by state, names visible (the group view folds them).
    browser.get(f"{url(stack, 'grafana')}/alerting/list?view=state&search=state:firing")

    def listed() -> str | bool:
        text = browser.find_element(By.TAG_NAME, "body").text
        return FAULTED_ALERT in text and text

    try:
        text = eventually(listed, timeout=60, every=2)
    finally:
        browser.save_screenshot(str(ARTIFACTS / "alert-list.png"))
    assert "Firing" in text


def test_the_forensics_dashboard_opened_from_a_run_shows_that_run(stack, browser, faulted) -> None:
    api = url(stack, "api")
    run = httpx.get(f"{api}/runs/{faulted['id']}").json()
    model = _model(stack, "wlmon-forensics")
    base = url(stack, "grafana")
    panels = {
        p["title"]: p
        for p in open_dashboard(browser, base, run["grafana_path"], model, "forensics-run")
    }
    assert f"var-run={faulted['id']}" in browser.current_url
    # The run's own events, read in its time range, name it.
    events = eventually(
        lambda: faulted["id"] in (t := _panel_text(browser, "Run events")) and t, timeout=60
    )
    assert "run_start" in events
    runs = panels["Runs (open one to snap the time range to it)"]["text"]
    assert PLAN["label"] in runs


def _panel_text(driver, title: str) -> str:
    return next(p["text"] for p in _panels(driver) if p["title"] == title)


def test_the_ui_reports_the_version_that_was_built(stack, browser) -> None:
    browser.get(f"{url(stack, 'grafana')}/")
    shown = eventually(
        lambda: browser.execute_script("return window.grafanaBootData.settings.buildInfo"),
        timeout=30,
    )
    assert shown["version"] == COMPONENTS["grafana"].version
    assert shown["commit"] == GRAFANA_COMMIT
