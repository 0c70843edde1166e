"""The HTML report: self-contained, opens offline in headless Chromium (Debian's package)
with no console error, and is saved as a PNG screenshot."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.config import Settings
from api.main import create_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


def _open(page: Path, tmp_path: Path, screenshot: Path) -> list[str]:
    """Load the page, save a screenshot; the console messages Chromium logged."""
    assert Path(CHROMIUM).is_file(), "chromium missing: apt-get install chromium"
    result = subprocess.run(
        [
            CHROMIUM,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1280,2000",
            f"--screenshot={screenshot}",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return [
        line for line in result.stderr.splitlines() if re.search(r"CONSOLE\(\d+\)|:CONSOLE", line)
    ]


@pytest.fixture(scope="module")
def html(tmp_path_factory) -> str:
    settings = Settings(db_path=tmp_path_factory.mktemp("api") / "db.sqlite", token="t")
    with TestClient(create_app(settings)) as client:
        body = {
            "duration_s": 900,
            "ramp_up_s": 120,
            "label": "html",
            "faults": [{"name": "slow-enqueue-link", "start_s": 300, "end_s": 600}],
        }
        run = client.post("/runs", json=body, headers={"Authorization": "Bearer t"}).json()
        r = client.get(f"/runs/{run['id']}/report", params={"format": "html"})
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        return r.text


def test_report_is_self_contained(html: str) -> None:
    assert "<script" not in html
    assert not re.search(r'(src|href)="(https?:)?//', html), "the report must not fetch anything"
    assert "<svg" in html and "Threshold breaches" in html and "SAPEnqueueTimeHigh" in html


def test_report_opens_in_headless_chromium_without_console_errors(
    html: str, tmp_path: Path
) -> None:
    page = tmp_path / "report.html"
    page.write_text(html, encoding="utf-8")
    shot = Path(__file__).resolve().parents[1] / "artifacts" / "report.png"
    shot.parent.mkdir(exist_ok=True)
    console = _open(page, tmp_path, shot)
    assert console == []
    assert shot.stat().st_size > 20_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_console_errors_are_detected(tmp_path: Path) -> None:
    """The check above can fail: a page that logs an error is caught."""
    page = tmp_path / "bad.html"
    page.write_text(
        "<!doctype html><html><body><script>console.error('broken chart')</script></body></html>"
    )
    console = _open(page, tmp_path, tmp_path / "bad.png")
    assert any("broken chart" in line for line in console)
